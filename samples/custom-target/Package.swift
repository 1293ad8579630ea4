// swift-tools-version:6.1
import PackageDescription

// A package of your own that adds a sync-up target to SyncPipeline and ships a `pipeline`
// command knowing it. It depends on SyncPipeline's library products (here by path; in your
// project, by its repository URL).
let package = Package(
    name: "AcmeSync",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SyncPipeline", path: "../.."),
    ],
    targets: [
        .target(
            name: "AcmeTargets",
            dependencies: [
                .product(name: "Stages", package: "SyncPipeline"),
                .product(name: "Connectors", package: "SyncPipeline"),
                .product(name: "Soups", package: "SyncPipeline"),
                .product(name: "SOQL", package: "SyncPipeline"),
                .product(name: "JSON", package: "SyncPipeline"),
            ]),
        .executableTarget(
            name: "acme-pipeline",
            dependencies: [
                "AcmeTargets",
                .product(name: "PipelineCLI", package: "SyncPipeline"),
                .product(name: "EmbeddedOrg", package: "SyncPipeline"),
                .product(name: "Stages", package: "SyncPipeline"),
            ]),
        .testTarget(
            name: "AcmeTargetsTests",
            dependencies: [
                "AcmeTargets",
                .product(name: "Stages", package: "SyncPipeline"),
                .product(name: "Connectors", package: "SyncPipeline"),
                .product(name: "Soups", package: "SyncPipeline"),
                .product(name: "JSON", package: "SyncPipeline"),
                .product(name: "OrgEmulator", package: "SyncPipeline"),
            ]),
    ]
)
