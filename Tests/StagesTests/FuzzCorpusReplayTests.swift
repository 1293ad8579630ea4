import Foundation
import FuzzTargets
import Testing

/// Replays the fuzzers' committed corpora (`Fuzz/Corpus/<target>`, grown by `scripts/fuzz`)
/// through the same entry points the fuzzers drive: every input returns, and the emulator
/// answers every request with a status.
@Suite struct FuzzCorpusReplayTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static func corpus(_ target: FuzzTarget) -> [String] {
        let directory = packageRoot + "/" + target.corpusDirectory
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted().map { directory + "/" + $0 }
    }

    @Test(arguments: [FuzzTarget.csv, .xml, .soql, .formula, .pipeline, .json])
    func corpusReplays(target: FuzzTarget) throws {
        let files = Self.corpus(target)
        #expect(files.count >= 10, "a corpus for \(target)")
        let scratch = FuzzTarget.makeScratch()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for file in files {
            target.run(try Data(contentsOf: URL(fileURLWithPath: file)), scratch: scratch)
        }
    }

    @Test func emulatorCorpusIsAnswered() async throws {
        let files = Self.corpus(.emulator)
        #expect(files.count >= 10)
        // The suite runs in parallel on two cores: the org's deadline (5 s when fuzzing) would turn
        // a request that merely waited its turn into a 500. What is checked here is the answer.
        let emulator = try await FuzzEmulator(seedPath: Self.packageRoot + "/samples/org/seed.json", requestDeadlineSeconds: 300)
        for file in files {
            let input = try Data(contentsOf: URL(fileURLWithPath: file))
            // The exchange blocks on its socket: off the cooperative pool, whose two threads the
            // emulator (in this process) needs to answer it on a loaded machine.
            let status = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: emulator.send(input, seconds: 310)) }
            }
            #expect(status.map { FuzzEmulator.isAcceptable($0, for: input) } == true,
                    "\((file as NSString).lastPathComponent): \(status.map(String.init) ?? "no answer")")
        }
        await emulator.stop()
    }
}
