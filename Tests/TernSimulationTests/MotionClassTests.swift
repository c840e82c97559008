import Foundation
import Testing
import TernSimulation

@Suite struct MotionClassTests {
    private func parseError(_ text: String) -> String? {
        do {
            _ = try MotionClass.parse(text, source: "dir/motion-classes.txt")
            return nil
        } catch let error as MotionClass.ManifestError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    @Test func eachLineGivesItsFileAClassAndCommentsAndBlankLinesAreSkipped() throws {
        let text = "# traces\nferry.csv vessel\n\nvan.csv   car  # a delivery round\nwalker.gpx walk/cycle\nyard.csv parked\n"
        let classes = try MotionClass.parse(text, source: "m")
        #expect(classes == ["ferry.csv": .vessel, "van.csv": .car, "walker.gpx": .walkCycle, "yard.csv": .parked])
    }

    @Test func anUnknownClassIsAnErrorNamingTheLineAndTheClassesKnown() {
        let message = parseError("ferry.csv vessel\nbike.csv bicycle\n")
        #expect(message?.hasPrefix("dir/motion-classes.txt:2: expected 'FILE CLASS'") == true)
        #expect(message?.contains("vessel, car, walk/cycle, parked") == true)
        #expect(message?.contains("bike.csv bicycle") == true)
    }

    @Test func unclassifiedIsNotAClassAManifestMayGive() {
        #expect(parseError("ferry.csv unclassified") != nil)
    }

    @Test func aLineWithoutExactlyTwoFieldsIsAnError() {
        #expect(parseError("ferry.csv") != nil)
        #expect(parseError("my ferry.csv vessel") != nil)
    }

    @Test func aDirectoryWithoutAManifestClassesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-motion-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try MotionClass.manifest(in: directory).isEmpty)
    }
}
