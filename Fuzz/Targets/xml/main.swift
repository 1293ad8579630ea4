import Foundation
import FuzzTargets

/// libFuzzer drives the xml target (scripts/fuzz links its no-main runtime).
enum Input {
    static let scratch = FuzzTarget.makeScratch()
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(runDriver(&argc, &argv) { bytes, size in
    FuzzTarget.xml.run(bytes.map { Data(bytes: $0, count: size) } ?? Data(), scratch: Input.scratch)
    return 0
})
