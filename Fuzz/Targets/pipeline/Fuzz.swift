import Foundation
import FuzzTargets

private let scratch = FuzzTarget.makeScratch()

/// libFuzzer's entry point: one input to the pipeline target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.pipeline.run(Data(bytes: bytes, count: size), scratch: scratch)
    return 0
}
