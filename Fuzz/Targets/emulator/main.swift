import Foundation
import FuzzTargets

/// One emulator for the whole fuzzing session, on a free loopback port; libFuzzer sends it one
/// request an input (scripts/fuzz links libFuzzer's no-main runtime).
enum Input {
    static let emulator: FuzzEmulator = {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../samples/org/seed.json").path
        let box = StartBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { box.result = .success(try await FuzzEmulator(seedPath: seed)) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try! box.result!.get()
    }()
}

final class StartBox: @unchecked Sendable {
    var result: Result<FuzzEmulator, any Error>?
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

_ = Input.emulator
var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(runDriver(&argc, &argv) { bytes, size in
    let input = bytes.map { Data(bytes: $0, count: size) } ?? Data()
    // A connection reset can lose an answer now and then; a request never answered twice is the finding.
    guard let status = Input.emulator.send(input) ?? Input.emulator.send(input) else { fatalError("no answer to the request, twice") }
    precondition(FuzzEmulator.isAcceptable(status, for: input), "the emulator failed with \(status)")
    return 0
})
