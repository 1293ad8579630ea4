import Connectors
import Foundation
import JSON
import OrgEmulator
import Stages

/// `--lookups N` (issue 52): N CSV rows staged into a soup with their owner found by e-mail and
/// their record type by developer name (two `lookups` in a transform), beside the same load with
/// the ids already in the file, alternating, against one in-process emulator. Prints each round's
/// times, the lookups' queries and the ratio of the best times (the bar: at most 1.10×).
enum LookupLoad {
    static func measure(rows: Int, seed: String) async throws -> (ratio: Double, queries: Int) {
        let folder = NSTemporaryDirectory() + "lookup-benchmark-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let emulator = try OrgEmulator(configuration: .init(databasePath: folder + "/org.sqlite", seedPath: seed))
        let running = try await emulator.start()
        defer { Task { await running.stop() } }
        let admin = try SalesforceClient(settings: OrgConnectionSettings(instanceURL: running.instanceURL, auth: .accessToken(accessToken: emulator.accessToken)))
        var owners: [(email: String, id: String)] = []
        for try await user in admin.query("SELECT Id, Email FROM User WHERE IsActive = true") {
            if let email = user["Email"]?.stringValue, let id = user["Id"]?.stringValue { owners.append((email, id)) }
        }
        var types: [(name: String, id: String)] = []
        for try await type in admin.query("SELECT Id, DeveloperName FROM RecordType WHERE SobjectType = 'Opportunity'") {
            if let name = type["DeveloperName"]?.stringValue, let id = type["Id"]?.stringValue { types.append((name, id)) }
        }
        await admin.shutdown()
        guard !owners.isEmpty, !types.isEmpty else { throw StageFailure(.failed, "the seed has no active users or no Opportunity record types") }

        // The same rows twice: keys to look up, and the ids they resolve to.
        var keyed = "LegacyId,Name,StageName,CloseDate,Amount,OwnerEmail,RecordType\n"
        var withIds = "LegacyId,Name,StageName,CloseDate,Amount,OwnerId,RecordTypeId\n"
        keyed.reserveCapacity(rows * 90)
        withIds.reserveCapacity(rows * 90)
        for row in 0..<rows {
            let owner = owners[row % owners.count], type = types[row / 7 % types.count]
            let common = "OPP-\(row),Deal \(row),Prospecting,2026-0\(1 + row % 9)-1\(row % 10),\(500 * (1 + row % 400))"
            keyed += "\(common),\(owner.email),\(type.name)\n"
            withIds += "\(common),\(owner.id),\(type.id)\n"
        }
        try keyed.write(toFile: folder + "/keyed.csv", atomically: true, encoding: .utf8)
        try withIds.write(toFile: folder + "/ids.csv", atomically: true, encoding: .utf8)

        let soups = #"[ { "soupName": "Opportunities", "indexes": [ { "path": "Id", "type": "string" }, { "path": "LegacyId", "type": "string" } ] } ]"#
        let lookups = """
            { "id": "shape", "type": "transform", "from": "csv",
              "lookups": [ { "field": "OwnerId", "sobjectType": "User", "match": { "Email": "OwnerEmail" }, "where": "IsActive = true" },
                           { "field": "RecordTypeId", "sobjectType": "RecordType", "match": { "SobjectType": "'Opportunity'", "DeveloperName": "RecordType" } } ],
              "drop": ["OwnerEmail", "RecordType"] },
            """
        func run(_ name: String, file: String, shape: String, from: String) async throws -> (seconds: Double, outcome: RunOutcome) {
            try? FileManager.default.removeItem(atPath: folder + "/\(name).sqlite")
            let path = folder + "/\(name).json"
            try """
                { "name": "\(name)", "org": { "instanceUrl": "\(running.instanceURL)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
                  "store": "\(name).sqlite", "soups": \(soups),
                  "stages": [ { "id": "csv", "type": "extract.csv", "file": "\(file)", "sobjectType": "Opportunity" }, \(shape)
                              { "id": "stage", "type": "stage", "from": "\(from)", "soup": "Opportunities", "matchOn": "LegacyId" } ] }
                """.write(toFile: path, atomically: true, encoding: .utf8)
            let pipeline = try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: ["TOKEN": emulator.accessToken])).load(path: path)
            let connector: OrgConnector = { configuration in
                guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
                return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
            }
            let start = ContinuousClock.now
            let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(reportDirectory: folder + "/report-\(name)"),
                                                   observer: QuietObserver(), orgConnector: connector).run()
            let elapsed = ContinuousClock.now - start
            guard outcome.exitCode == 0, outcome.report.stages.last?.counts["created"] == rows else {
                throw StageFailure(.failed, "the \(name) load ended with exit code \(outcome.exitCode): \(outcome.report.stages)")
            }
            return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, outcome)
        }
        var plain: [Double] = []
        var looked: [Double] = []
        var queries = 0
        for round in 1...2 {
            let ids = try await run("ids", file: folder + "/ids.csv", shape: "", from: "csv")
            let keys = try await run("lookups", file: folder + "/keyed.csv", shape: lookups, from: "shape")
            queries = keys.outcome.report.api.byKind["query"] ?? 0
            plain.append(ids.seconds)
            looked.append(keys.seconds)
            print(String(format: "  round %d: ids in the file %.2f s, two lookups %.2f s (%d queries): %.2f×", round, ids.seconds, keys.seconds,
                         queries, keys.seconds / ids.seconds))
        }
        return (looked.min()! / plain.min()!, queries)
    }
}
