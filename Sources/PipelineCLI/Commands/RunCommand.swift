import ArgumentParser
import Dispatch
import Foundation
import Stages

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a pipeline.",
        discussion: """
            Logs and progress go to stderr; stdout gets a summary table and, last, the absolute report directory. \
            Relative paths in the pipeline file resolve against the file's own folder, so it runs the same from anywhere.
            """)

    @Argument(help: "The pipeline file (JSON).")
    var file: String

    @Flag(help: "Run on a temporary copy of the store and send no write request to the org.")
    var dryRun = false

    @OptionGroup var variables: VariableOptions

    @Option(name: .customLong("only"), help: ArgumentHelp("Run only this stage (repeatable); its inputs come from an earlier run's datasets, and a transform that streams to it runs with it.", valueName: "STAGE"))
    var only: [String] = []

    @Option(help: ArgumentHelp("Write the report here instead of the default.", valueName: "DIR"))
    var reportDir: String?

    @Option(help: "Log format on stderr: text or json (one object per line).")
    var logFormat: String = "text"

    @Flag(help: "Print only errors and the report directory.")
    var quiet = false

    @Flag(help: "Allow writes to a production org (Organization.IsSandbox false).")
    var allowProduction = false

    func run() async throws {
        do {
            guard let format = ConsoleObserver.Format(rawValue: logFormat) else {
                throw CLIError(exitCode: 2, message: "--log-format must be text or json, not \"\(logFormat)\"")
            }
            let pipeline = try variables.load(file)
            let control = RunControl()
            let signals = SignalTrap(control: control)
            defer { signals.cancel() }
            // A pipeline that says `"dryRun": true` only ever plans.
            let dryRun = dryRun || pipeline.dryRun
            let selected = only.isEmpty ? pipeline.stages : pipeline.stages.filter { only.contains($0.id) }
            let connections = OrgConnections(dryRun: dryRun, allowProduction: allowProduction,
                                             writes: selected.contains { type(of: $0.stage).writesToOrg },
                                             embeddedOrg: PipelineCommand.embeddedOrg)
            let runner = PipelineRunner(
                pipeline: pipeline, options: RunOptions(dryRun: dryRun, only: only, reportDirectory: reportDir),
                observer: ConsoleObserver(format: format, quiet: quiet), orgConnector: connections.connector, control: control)
            let outcome: RunOutcome
            do {
                outcome = try await runner.run()
                await connections.close()
            } catch {
                await connections.close()
                throw CLIError(exitCode: error.exitCode, message: error.description)
            }
            if !quiet { Console.output(SummaryTable.render(outcome.report)) }
            Console.output(outcome.report.reportDir)
            if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
        } catch let error as CLIError {
            throw error.exit()
        }
    }
}

/// The per-stage table printed on stdout after a run.
enum SummaryTable {
    static func render(_ report: RunReport) -> String {
        let rows = report.stages.map { stage -> [String] in
            let counts = stage.counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return [stage.id, stage.type, stage.status.rawValue, counts.isEmpty ? "-" : counts, String(format: "%.2fs", Double(stage.durationMs) / 1000)]
        }
        return TextTable.render(header: ["stage", "type", "status", "counts", "duration"], rows: rows)
            + "\n\(report.status.rawValue) (exit \(report.exitCode))\(report.dryRun ? ", dry run" : "")"
    }
}
