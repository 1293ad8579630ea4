import Foundation
import FuzzTargets

/// One libFuzzer executable for every target: `fuzz <target> [libFuzzer options] [corpus…]`, with
/// target one of csv, xml, soql, formula, pipeline, json, emulator (scripts/fuzz links libFuzzer's no-main
/// runtime, whose driver this main calls).
enum Input {
    /// Set once, before the driver starts.
    nonisolated(unsafe) static var target = FuzzTarget.csv
    static let scratch = FuzzTarget.makeScratch()
    /// One emulator for the whole session, on a free loopback port (the emulator target only).
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

    static func run(_ input: Data) {
        guard target == .emulator else { return target.run(input, scratch: scratch) }
        // A connection reset can lose an answer now and then; a request never answered twice is the finding.
        guard let status = emulator.send(input) ?? emulator.send(input) else { fatalError("no answer to the request, twice") }
        precondition(FuzzEmulator.isAcceptable(status, for: input), "the emulator failed with \(status)")
    }
}

final class StartBox: @unchecked Sendable {
    var result: Result<FuzzEmulator, any Error>?
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var arguments = CommandLine.arguments
// libFuzzer runs this program again for `-merge=1`, with its own arguments only: the target goes
// to those runs through the environment.
let named = arguments.count > 1 ? FuzzTarget(rawValue: arguments[1]) : nil
if named != nil { arguments.remove(at: 1) }
guard let target = named ?? ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap(FuzzTarget.init(rawValue:)) else {
    FileHandle.standardError.write(Data("usage: fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) [libFuzzer options] [corpus…]\n".utf8))
    exit(2)
}
setenv("FUZZ_TARGET", target.rawValue, 1)
Input.target = target
if target == .emulator { _ = Input.emulator }
// libFuzzer reads the remaining arguments, the program name first.
var argc = CInt(arguments.count)
var storage = arguments.map { strdup($0) } + [nil]
exit(storage.withUnsafeMutableBufferPointer { buffer in
    var argv = buffer.baseAddress!
    return runDriver(&argc, &argv) { bytes, size in
        Input.run(bytes.map { Data(bytes: $0, count: size) } ?? Data())
        return 0
    }
})
