import Foundation
import FuzzTargets

/// One emulator for the whole fuzzing session, on a free loopback port.
private let emulator: FuzzEmulator = {
    let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../samples/org/seed.json").path
    let box = StartBox()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await FuzzEmulator(seedPath: seed)) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try! box.result!.get()
}()

private final class StartBox: @unchecked Sendable {
    var result: Result<FuzzEmulator, any Error>?
}

/// libFuzzer's entry point: one HTTP request to the emulator, which must answer it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let status = emulator.send(Data(bytes: bytes, count: size)) else { fatalError("no answer to the request") }
    precondition(status < 500 || status == 503, "the emulator failed with \(status)")
    return 0
}
