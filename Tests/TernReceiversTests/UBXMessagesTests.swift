import Testing

@testable import TernReceivers

@Suite struct UBXMessagesTests {
    /// The widely published "disable GPGSV" frame; checksum also verified with `referenceFletcher`.
    @Test func cfgMsgTurnsGSVOff() {
        #expect(UBXMessages.setMessageRate(.gsv, rate: 0).bytes == bytes("B5 62 06 01 03 00 F0 03 00 FD 15"))
    }

    /// The widely published "1 Hz" CFG-RATE frame (1000 ms, navRate 1, GPS time).
    @Test func cfgRateOneHertz() {
        #expect(
            UBXMessages.setMeasurementRate(milliseconds: 1000).bytes
                == bytes("B5 62 06 08 06 00 E8 03 01 00 01 00 01 39"))
    }

    /// The widely published "backup until reset/EXTINT" RXM-PMREQ (8-byte form).
    @Test func legacyPmreqBackupForever() {
        #expect(
            UBXMessages.legacyBackup(milliseconds: 0).bytes == bytes("B5 62 02 41 08 00 00 00 00 00 02 00 00 00 4D 3B"))
    }

    /// UBX-13003221 §32.10.25: portID, reserved, txReady, mode 0x08D0, baudRate, inProto, outProto, flags, reserved.
    @Test func cfgPrtSetsUART1BaudAndProtocols() {
        let sut = UBXMessages.configureUART1(baudRate: 115_200, input: [.ubx, .nmea], output: [.nmea])
        #expect(sut.payload == bytes("01 00 00 00 D0 08 00 00 00 C2 01 00 03 00 02 00 00 00 00 00"))
        #expect(sut.messageClass == 0x06 && sut.messageID == 0x00)
    }

    /// UBX-13003221 §32.17.2 (16-byte form): version 0, duration, flags bit 1 = backup, wakeupSources bit 3 = UART RX.
    @Test func pmreqBackupWithUartWake() {
        let sut = UBXMessages.backup(milliseconds: 60_000, wakeSources: .uartRX)
        #expect(sut.payload == bytes("00 00 00 00 60 EA 00 00 02 00 00 00 08 00 00 00"))
    }

    /// CFG-VALSET: version 0, layer RAM, reserved, then key (LE) and a value of the key's size.
    @Test func valsetEncodesKeysAndSizedValues() {
        let sut = UBXMessages.setValues([(.uart1BaudRate, 115_200), (.nmeaOutputUART1(.gsv), 0)])
        #expect(sut.bytes.prefix(6) == [0xB5, 0x62, 0x06, 0x8A, 0x11, 0x00])
        #expect(sut.payload == bytes("00 01 00 00 01 00 52 40 00 C2 01 00 C5 00 91 20 00"))
    }

    @Test(arguments: [
        (UBXConfigKey(0x1011_0001), 1), (.nmeaOutputUART1(.gga), 1), (.rateMeasurement, 2), (.uart1BaudRate, 4),
    ])
    func keySizeComesFromBits28To30(key: UBXConfigKey, size: Int) {
        #expect(key.valueSize == size)
    }

    @Test func parsesAckAck() {
        #expect(
            UBXAck(UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06, 0x00]))
                == UBXAck(acknowledged: true, messageClass: 0x06, messageID: 0x00))
    }

    @Test func parsesAckNak() {
        #expect(UBXAck(UBXFrame(messageClass: 0x05, messageID: 0x00, payload: [0x06, 0x8A]))?.acknowledged == false)
    }

    @Test func anAckWithAWrongLengthIsRejected() {
        #expect(UBXAck(UBXFrame(messageClass: 0x05, messageID: 0x01, payload: [0x06])) == nil)
    }

    @Test func parsesMonVer() {
        let sut = UBXVersion(
            Self.monVer(
                software: "ROM CORE 3.01 (107888)", hardware: "00080000",
                extensions: ["FWVER=SPG 3.01", "PROTVER=18.00", "MOD=NEO-M8N-0"]))
        #expect(
            sut
                == UBXVersion(
                    software: "ROM CORE 3.01 (107888)", hardware: "00080000",
                    extensions: ["FWVER=SPG 3.01", "PROTVER=18.00", "MOD=NEO-M8N-0"]))
    }

    @Test func monVerExposesTheProtocolVersion() {
        let sut = UBXVersion(
            Self.monVer(software: "EXT CORE 4.04", hardware: "000A0000", extensions: ["PROTVER=32.01"]))
        #expect(sut?.protocolVersion == "32.01")
    }

    @Test func aTruncatedMonVerIsRejected() {
        #expect(
            UBXVersion(UBXFrame(messageClass: 0x0A, messageID: 0x04, payload: Array(repeating: 0x41, count: 45))) == nil
        )
    }

    /// Builds a MON-VER reply: NUL-padded CH[30] + CH[10] + CH[30]×N.
    static func monVer(software: String, hardware: String, extensions: [String]) -> UBXFrame {
        func padded(_ text: String, _ size: Int) -> [UInt8] {
            Array(text.utf8.prefix(size)) + [UInt8](repeating: 0, count: size - min(size, text.utf8.count))
        }
        let payload = padded(software, 30) + padded(hardware, 10) + extensions.flatMap { padded($0, 30) }
        return UBXFrame(messageClass: 0x0A, messageID: 0x04, payload: payload)
    }
}
