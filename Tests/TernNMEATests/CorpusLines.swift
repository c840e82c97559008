// Real receiver output from the gpsd regression suite (test/daemon/*.log), BSD-2-Clause.

enum Corpus {
    // bu353s4.log: GlobalSat BU-353-S4 (SiRF-IV), Hamilton NZ, recorded 2014-12-31.
    static let bu353GGA = "$GPGGA,030719.000,3747.0873,S,17518.8938,E,1,08,1.1,59.9,M,23.7,M,,0000*7D"
    static let bu353RMC = "$GPRMC,030719.000,A,3747.0873,S,17518.8938,E,0.69,181.39,311214,,,A*7D"
    static let bu353GGANext = "$GPGGA,030720.000,3747.0875,S,17518.8938,E,1,08,1.1,59.8,M,23.7,M,,0000*70"
    static let bu353RMCNext = "$GPRMC,030720.000,A,3747.0875,S,17518.8938,E,1.15,181.39,311214,,,A*7B"
    static let bu353GSA = "$GPGSA,A,3,17,28,06,01,30,20,26,13,,,,,1.8,1.1,1.5*33"

    // neo-m8n.log: u-blox NEO-M8N, recorded 2015-03-18 (RMC before GGA in each cycle).
    static let neoRMC = "$GNRMC,171926.00,A,4404.14063,N,12118.85478,W,0.117,,180315,,,A*76"
    static let neoGGA = "$GNGGA,171926.00,4404.14063,N,12118.85478,W,1,12,0.91,1147.2,M,-21.3,M,,*44"
    static let neoRMCNext = "$GNRMC,171927.00,A,4404.14058,N,12118.85475,W,0.084,,180315,,,A*79"
    static let neoGGANext = "$GNGGA,171927.00,4404.14058,N,12118.85475,W,1,12,0.91,1147.0,M,-21.3,M,,*42"

    // A receiver still acquiring (SiRF, 2015-03-02).
    static let acquiringRMC = "$GNRMC,053229.438,V,,,,,,,020315,,,N*56"
    static let acquiringGGA = "$GPGGA,053229.438,,,,,0,00,,,M,0.0,M,,0000*56"

    // Proprietary Garmin error estimate, and a two-part AIS message (ais-nmea.log).
    static let garminPGRME = "$PGRME,9.1,M,15.0,M,12.0,M*21"
    static let garminRMB = "$GPRMB,A,,,,,,,,,,,,V*71"

    // Multi-constellation and NMEA 4.10 sentences, in the formats of the corpus receivers (checksums recomputed).
    static let gnGNS = "$GNGNS,171926.00,4404.14063,N,12118.85478,W,AAN,12,0.91,1147.2,-21.3,,*20"
    static let gllV3 = "$GNGLL,4404.13910,N,12118.85369,W,171947.00,A,A*6C"
    static let gsa410 = "$GNGSA,A,3,02,12,25,29,31,,,,,,,,1.50,0.86,1.23,1*04"
    static let gsvGL = "$GLGSV,3,1,09,65,42,050,28,66,80,287,,72,17,059,,74,18,187,*6A"
    static let vtg = "$GPVTG,054.7,T,034.4,M,005.5,N,010.2,K,A*25"
    static let zda = "$GPZDA,193223.00,23,12,2007,00,00*69"
    static let gst = "$GPGST,172814.0,0.006,0.023,0.020,273.6,0.023,0.020,0.031*6A"
    static let txt = "$GPTXT,01,01,02,ANTSTATUS=OK*3B"

    static let aisVDM = "!AIVDM,2,2,9,B,`88888888888880,2*76"
}

extension String {
    /// The sentence as bytes with a CRLF line ending.
    var line: [UInt8] { Array((self + "\r\n").utf8) }
}
