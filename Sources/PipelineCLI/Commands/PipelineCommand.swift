import ArgumentParser
import Foundation
import Stages

/// The `pipeline` command line. A user package can run it with its own stage types, and with
/// or without the embedded org emulator (`EmbeddedOrg`):
///
/// ```swift
/// var registry = StageRegistry.builtIn
/// registry.register(MyStage.self)
/// await PipelineCommand.main(registry: registry, embeddedOrg: EmbeddedEmulator())
/// ```
public struct PipelineCommand: AsyncParsableCommand {
    public static var configuration: CommandConfiguration { CommandConfiguration(
        commandName: "pipeline",
        abstract: "Run JSON-declared data pipelines between files, SmartStore-style soups and a Salesforce org.",
        discussion: """
            Exit codes: 0 success · 1 a stage failed after it changed something · 2 invalid input, nothing changed · \
            3 finished with rejected, failed, conflicting or uncertain records · 4 another run holds the store · \
            130 / 143 stopped by SIGINT / SIGTERM.
            """,
        version: PipelineVersion.current,
        subcommands: [RunCommand.self, ValidateCommand.self, GraphCommand.self, SoupsCommand.self, SyncsCommand.self,
                      RunsCommand.self, DiscardCommand.self] + (embeddedOrg?.commands ?? []) + [VersionCommand.self])
    }

    public init() {}

    /// The stage types pipeline files may use in this process.
    @TaskLocal public static var registry: StageRegistry = .builtIn

    /// What starts `"org": {"emulator": {…}}` in this process, if the build has one.
    @TaskLocal public static var embeddedOrg: (any EmbeddedOrgLauncher)?

    /// Parses the process arguments and runs the command with `registry`'s stage types and,
    /// given one, an embedded org (and its commands).
    ///
    /// Stores, datasets, reports and logs hold customer data: whatever umask the process was
    /// started with, everything it creates is readable by its owner only (files 0600, folders 0700).
    public static func main(registry: StageRegistry, embeddedOrg: (any EmbeddedOrgLauncher)? = nil) async {
        umask(0o077)
        await $registry.withValue(registry) {
            await $embeddedOrg.withValue(embeddedOrg) {
                await main()
            }
        }
    }
}

/// The version `pipeline version` prints.
public enum PipelineVersion {
    public static let current = "0.1.0"
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the version.")

    func run() {
        print("pipeline \(PipelineVersion.current)")
    }
}
