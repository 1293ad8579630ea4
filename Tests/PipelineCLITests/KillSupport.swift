import Foundation
import Soups

extension PipelineCLITests {
    /// Runs `pipeline run <pipeline>` in the background, polls its store until `progress` reports
    /// at least `threshold` (or about `seconds` pass), then kills it with SIGKILL; returns the last
    /// progress seen.
    static func runAndKill(_ pipeline: String, store: String, threshold: Int, seconds: Int = 30,
                           progress: @escaping (SoupStore) async -> Int) async throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: packageRoot + "/.build/debug/pipeline")
        process.arguments = ["run", pipeline]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = 0
        for _ in 0..<(seconds * 100) where seen < threshold {
            try await Task.sleep(for: .milliseconds(10))
            guard let reader = try? SoupStore.openForReading(path: store) else { continue }
            seen = await progress(reader)
            try? reader.close()
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return seen
    }
}
