// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "SyncPipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pipeline", targets: ["pipeline"]),
        .library(name: "PipelineCLI", targets: ["PipelineCLI"]),
        .library(name: "EmbeddedOrg", targets: ["EmbeddedOrg"]),
        .library(name: "Stages", targets: ["Stages"]),
        .library(name: "Connectors", targets: ["Connectors"]),
        .library(name: "Soups", targets: ["Soups"]),
        .library(name: "SOQL", targets: ["SOQL"]),
        .library(name: "Formulas", targets: ["Formulas"]),
        .library(name: "Formats", targets: ["Formats"]),
        .library(name: "JSON", targets: ["JSON"]),
        .library(name: "OrgEmulator", targets: ["OrgEmulator"]),
        .library(name: "OrgEmulatorTesting", targets: ["OrgEmulatorTesting"]),
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates", exact: "1.21.1"),
    ],
    targets: [
        .executableTarget(name: "pipeline", dependencies: ["PipelineCLI", "EmbeddedOrg", "CJemalloc"]),
        // jemalloc as the allocator (`libjemalloc-dev`; see its header).
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc")]),
        .target(
            name: "PipelineCLI",
            dependencies: [
                "Stages", "Soups", "JSON",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The org emulator as pipeline's embedded org and its `emulator` command; a deployment
        // build whose main leaves it out ships without the emulator (Hummingbird, NIOSSL, X509).
        .target(
            name: "EmbeddedOrg",
            dependencies: ["PipelineCLI", "Stages", "OrgEmulator", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .target(
            name: "Stages",
            dependencies: [
                "Connectors", "Soups", "SOQL", "Formulas", "Formats", "JSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "Connectors",
            dependencies: [
                "SOQL", "Formats", "JSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        .target(
            name: "Soups",
            dependencies: ["JSON", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .target(name: "SOQL", dependencies: ["JSON"]),
        .target(name: "Formulas", dependencies: ["JSON"]),
        .target(name: "Formats", dependencies: ["JSON"]),
        .target(name: "JSON"),
        .target(
            name: "OrgEmulator",
            dependencies: [
                "SOQL", "Formats", "JSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        // Test support: an emulator per test on a free port, its clock shared with clients.
        .target(name: "OrgEmulatorTesting", dependencies: ["OrgEmulator", "Connectors", "JSON"]),
        .target(name: "FuzzTargets", dependencies: ["Connectors", "Stages", "SOQL", "Formulas", "Formats", "JSON", "OrgEmulator"]),
        .executableTarget(
            name: "SoupBenchmark",
            dependencies: [
                "Soups", "JSON", "CJemalloc",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/SoupBenchmark"),
        .executableTarget(
            name: "EmulatorBenchmark", dependencies: ["OrgEmulator", "JSON", "CJemalloc"], path: "Benchmarks/EmulatorBenchmark"),
        .executableTarget(
            name: "ClientBenchmark", dependencies: ["Connectors", "OrgEmulator", "JSON", "CJemalloc"], path: "Benchmarks/ClientBenchmark"),
        .executableTarget(
            name: "StagingBenchmark", dependencies: ["Stages", "Soups", "JSON", "CJemalloc"], path: "Benchmarks/StagingBenchmark"),
        .executableTarget(
            name: "SyncUpBenchmark", dependencies: ["Stages", "Soups", "Connectors", "OrgEmulator", "JSON", "CJemalloc"], path: "Benchmarks/SyncUpBenchmark"),
        .executableTarget(
            name: "SyncDownBenchmark", dependencies: ["Stages", "Soups", "Connectors", "OrgEmulator", "JSON", "CJemalloc"], path: "Benchmarks/SyncDownBenchmark"),
        /// Test support: child processes started with posix_spawn (Foundation's `Process` crashed tests).
        .target(name: "ChildProcesses", path: "Tests/ChildProcesses"),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "SOQLTests", dependencies: ["SOQL", "JSON"]),
        .testTarget(name: "FormulasTests", dependencies: ["Formulas", "JSON"]),
        .testTarget(name: "FormatsTests", dependencies: ["Formats", "JSON"]),
        .testTarget(
            name: "ConnectorsTests",
            dependencies: [
                "Connectors", "OrgEmulatorTesting", "SOQL", "JSON",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        .testTarget(
            name: "OrgEmulatorTests",
            dependencies: [
                "OrgEmulator", "OrgEmulatorTesting", "SOQL", "JSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]),
        .testTarget(name: "SoupsTests", dependencies: ["Soups", "JSON", "ChildProcesses", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "StagesTests", dependencies: ["Stages", "Soups", "SOQL", "Formulas", "JSON", "Connectors", "OrgEmulator", "OrgEmulatorTesting", "FuzzTargets"]),
        .testTarget(
            name: "PipelineCLITests",
            dependencies: ["PipelineCLI", "EmbeddedOrg", "Stages", "Soups", "JSON", "Connectors", "OrgEmulator", "OrgEmulatorTesting", "ChildProcesses", .product(name: "GRDB", package: "GRDB.swift")]),
    ]
)
