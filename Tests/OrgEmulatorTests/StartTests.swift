import Foundation
import OrgEmulator
import OrgEmulatorTesting
import Testing

/// `OrgEmulator.start()`: serving in the background, and a clear error when it cannot start.
@Suite struct StartTests {
    @Test func aBusyPortIsAnErrorNotAHang() async throws {
        let first = try await OrgEmulator(configuration: .init(port: 0, seedPath: SampleOrg.seedPath)).start()
        let port = try #require(Int(first.instanceURL.split(separator: ":").last ?? ""))
        do {
            _ = try await OrgEmulator(configuration: .init(port: port, seedPath: SampleOrg.seedPath)).start()
            Issue.record("a second emulator on port \(port) should not start")
        } catch {
            #expect("\(error)".lowercased().contains("address already in use") || "\(error)".contains("EADDRINUSE") || "\(error)".contains("bind"))
        }
        await first.stop()
        // Stopped means the port is free again.
        let again = try await OrgEmulator(configuration: .init(port: port, seedPath: SampleOrg.seedPath)).start()
        #expect(again.instanceURL == first.instanceURL)
        await again.stop()
    }
}
