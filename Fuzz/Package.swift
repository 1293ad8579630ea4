// swift-tools-version:6.1
// libFuzzer targets for SyncPipeline's parsers and the emulator's request handling. Built only by
// `scripts/fuzz` (with -sanitize=fuzzer), never by the main package's build; `swift test` replays
// the committed corpora in Fuzz/Corpus through the same FuzzTargets functions.
import Foundation
import PackageDescription

// A path dependency is named after its folder, whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "SyncPipelineFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "fuzz", dependencies: [.product(name: "FuzzTargets", package: root)], path: "Targets/fuzz"),
    ]
)
