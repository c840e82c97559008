print("tern-fuzz-nmea: replay mode placeholder")
