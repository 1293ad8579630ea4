import Foundation
import ChildProcesses
import GRDB
import Soups

extension PipelineCLITests {
    /// Runs `pipeline run <pipeline>` in the background until `reached` says so (polled every
    /// 10 ms, for at most `seconds`), then kills it with SIGKILL. Tests make the run unable to
    /// finish first with a stall fault (`stallAfterWrites` / `stallAfterRequests`), so the kill
    /// lands at the point observed, on a fast machine or a slow one. Returns whether it was reached.
    @discardableResult
    static func runAndKill(_ pipeline: String, seconds: Int = 60, when reached: @escaping () async -> Bool) async throws -> Bool {
        let child = try ChildProcess(packageRoot + "/.build/debug/pipeline", ["run", pipeline])
        var seen = false
        for _ in 0..<(seconds * 100) where !seen {
            if child.poll() != nil { return false }
            try await Task.sleep(for: .milliseconds(10))
            seen = await reached()
        }
        child.kill()
        child.wait()
        return seen
    }

    /// Live records of `types` in an emulator's database (read while the emulator runs).
    static func orgRecordCount(_ databasePath: String, types: [String]) -> Int {
        guard FileManager.default.fileExists(atPath: databasePath), let queue = try? DatabaseQueue(path: databasePath) else { return 0 }
        defer { try? queue.close() }
        let list = types.map { "'\($0)'" }.joined(separator: ",")
        return (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM records WHERE isDeleted = 0 AND type IN (\(list))") }) ?? 0
    }

    /// The number of entries of a soup (0 while the store cannot be read).
    static func entryCount(_ store: String, soup: String) async -> Int {
        guard let reader = try? SoupStore.openForReading(path: store) else { return 0 }
        defer { try? reader.close() }
        return (try? await reader.counts(of: soup).total) ?? 0
    }
}
