import ArgumentParser
import Dispatch
import Foundation
import OrgEmulator
import PipelineCLI

/// `pipeline emulator`: serves an emulated org until SIGINT or SIGTERM.
public struct EmulatorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Serve an emulated Salesforce org (REST, OAuth, Composite, Collections) on this machine.",
        discussion: """
            Prints one line, `instance_url=… access_token=… username=…`, then serves until SIGINT or SIGTERM. \
            Point any Salesforce client at the instance URL. The admin API is under /emulator (stats, reset, clock, faults).
            """)

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port = 8383

    @Option(help: ArgumentHelp("Keep the org in this SQLite file between starts (default: in memory).", valueName: "FILE"))
    var database: String?

    @Option(help: ArgumentHelp("The seed: schema, users, settings and records (docs/seed-format.md).", valueName: "FILE"))
    var seed: String?

    @Option(help: ArgumentHelp("Use this access token instead of a generated one.", valueName: "TOKEN"))
    var accessToken: String?

    @Option(help: ArgumentHelp("Delay every /services request by N milliseconds.", valueName: "N"))
    var latencyMs: Int?

    @Option(help: ArgumentHelp("Faults to inject from the start (the JSON of POST /emulator/faults).", valueName: "FILE"))
    var faults: String?

    @Option(help: ArgumentHelp(
        "Stop a request that runs longer than this many seconds without applying it, as an org does (default 30). Give clients the same value as requestDeadlineSeconds.",
        valueName: "SECONDS"))
    var requestDeadline: Double = 30

    @Option(help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (with --tls-key).", valueName: "PEM"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "PEM"))
    var tlsKey: String?

    public init() {}

    public func run() async throws {
        let emulator: OrgEmulator
        do {
            emulator = try OrgEmulator(configuration: .init(
                host: host, port: port, databasePath: database, seedPath: seed, accessToken: accessToken,
                faultsPath: faults, latencyMs: latencyMs, tlsCertificatePath: tlsCert, tlsKeyPath: tlsKey,
                requestDeadlineSeconds: requestDeadline))
        } catch {
            Console.error("error: \(error.description)")
            throw ExitCode(2)
        }
        let token = emulator.accessToken
        let username = emulator.username
        let server = Task {
            try await emulator.run { url in
                Console.output("instance_url=\(url) access_token=\(token) username=\(username)")
            }
        }
        let stopper = SignalTrap { _ in server.cancel() }
        defer { stopper.cancel() }
        do {
            try await server.value
        } catch is CancellationError {
            return
        } catch let error as OrgEmulator.StartError {
            Console.error("error: \(error.description)")
            throw ExitCode(2)
        } catch {
            if server.isCancelled { return }
            Console.error("error: \(error)")
            throw ExitCode(1)
        }
    }
}
