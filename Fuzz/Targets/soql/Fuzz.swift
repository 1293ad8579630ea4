import Foundation
import FuzzTargets

private let scratch = FuzzTarget.makeScratch()

/// libFuzzer's entry point: one input to the soql target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.soql.run(Data(bytes: bytes, count: size), scratch: scratch)
    return 0
}
