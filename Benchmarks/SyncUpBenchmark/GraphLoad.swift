import Connectors
import Foundation
import JSON
import OrgEmulator
import Soups
import Stages

/// A locally created soup entry of `type` with id `id`.
func local(_ type: String, _ id: String, _ fields: JSONObject) -> JSONObject {
    var entry: JSONObject = ["attributes": ["type": .string(type)], "Id": .string(id)]
    for (key, value) in fields { entry[key] = value }
    entry["__local__"] = true
    entry["__locally_created__"] = true
    return entry
}

/// The graph load of issue 15: `accounts` Accounts (a tenth of them under another account), 5
/// Contacts each, 2 Cases per Contact — one graph sync up, against the same records as three
/// separate syncs (Account → Contact, Contact → Case, then the accounts' ParentId as updates, their
/// ids mapped by the caller as a user's script would).
enum GraphLoad {
    struct Figures {
        var requests = 0
        var milliseconds = 0.0
        var created = 0
        var updated = 0
    }

    static let soups = """
        [ { "soupName": "Accounts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "Name", "type": "string" },
                                                 { "path": "ParentId", "type": "string" }, { "path": "__local__", "type": "string" } ] },
          { "soupName": "Contacts", "indexes": [ { "path": "Id", "type": "string" }, { "path": "AccountId", "type": "string" },
                                                 { "path": "__local__", "type": "string" } ] },
          { "soupName": "Cases", "indexes": [ { "path": "Id", "type": "string" }, { "path": "ContactId", "type": "string" },
                                              { "path": "__local__", "type": "string" } ] } ]
        """

    static let graphSync = """
        [ { "syncName": "graph", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "graph", "objects": [
            { "soupName": "Accounts", "sobjectType": "Account", "createFieldlist": ["Name", "ParentId"],
              "references": [ { "field": "ParentId", "soup": "Accounts" } ] },
            { "soupName": "Contacts", "sobjectType": "Contact", "createFieldlist": ["LastName", "AccountId"],
              "references": [ { "field": "AccountId", "soup": "Accounts" } ] },
            { "soupName": "Cases", "sobjectType": "Case", "createFieldlist": ["Subject", "ContactId"],
              "references": [ { "field": "ContactId", "soup": "Contacts" } ] } ] } } ]
        """

    static let separateSyncs = """
        [ { "syncName": "accounts", "syncType": "syncUp", "soupName": "Accounts", "target": { "type": "parent_children",
              "relationshipType": "LOOKUP", "parent": { "sobjectType": "Account", "soupName": "Accounts" },
              "children": { "sobjectType": "Contact", "sobjectTypePlural": "Contacts", "soupName": "Contacts", "parentIdFieldName": "AccountId" },
              "createFieldlist": ["Name"], "updateFieldlist": ["ParentId"], "childrenCreateFieldlist": ["LastName", "AccountId"] } },
          { "syncName": "cases", "syncType": "syncUp", "soupName": "Contacts", "target": { "type": "parent_children",
              "relationshipType": "LOOKUP", "parent": { "sobjectType": "Contact", "soupName": "Contacts" },
              "children": { "sobjectType": "Case", "sobjectTypePlural": "Cases", "soupName": "Cases", "parentIdFieldName": "ContactId" },
              "createFieldlist": ["LastName"], "childrenCreateFieldlist": ["Subject", "ContactId"] } } ]
        """

    /// Runs one load; `graph` chooses the graph sync or the three separate ones.
    static func measure(accounts: Int, graph: Bool, seed: String) async throws -> Figures {
        let folder = NSTemporaryDirectory() + "graph-benchmark-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let emulator = try OrgEmulator(configuration: .init(databasePath: folder + "/org.sqlite", seedPath: seed))
        let running = try await emulator.start()
        defer { Task { await running.stop() } }
        func pipeline(_ stages: String) throws -> PipelineDefinition {
            let path = folder + "/pipeline.json"
            try """
                { "name": "graph-bench", "org": { "instanceUrl": "\(running.instanceURL)", "maxInFlight": 8,
                                                  "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
                  "store": "store.sqlite", "soups": \(soups), "syncs": \(graph ? graphSync : separateSyncs), "stages": \(stages) }
                """.write(toFile: path, atomically: true, encoding: .utf8)
            return try PipelineLoader(registry: .builtIn, variables: VariableResolver(variables: ["TOKEN": emulator.accessToken])).load(path: path)
        }
        let first = try pipeline(graph ? #"[ { "id": "up", "type": "syncUp", "sync": "graph" } ]"#
                                       : #"[ { "id": "up", "type": "syncUp", "sync": "accounts" } ]"#)
        let store = try SoupStore(path: first.store)
        for soup in first.soups { try await store.registerSoup(soup) }
        // Every tenth account hangs under the account before it (a self-lookup).
        let parentOf = { (index: Int) -> Int? in index % 10 == 9 ? index - 1 : nil }
        try await store.upsert((0..<accounts).map { index in
            var fields: JSONObject = ["Name": .string("Account \(index)")]
            if graph, let parent = parentOf(index) { fields["ParentId"] = .string("local_a\(parent)") }
            return local("Account", "local_a\(index)", fields)
        }, into: "Accounts")
        try await store.upsert((0..<accounts).flatMap { account in
            (0..<5).map { local("Contact", "local_c\(account)_\($0)", ["LastName": .string("Contact \(account)-\($0)"), "AccountId": .string("local_a\(account)")]) }
        }, into: "Contacts")
        try await store.upsert((0..<accounts).flatMap { account in
            (0..<5).flatMap { contact in
                (0..<2).map { local("Case", "local_s\(account)_\(contact)_\($0)", ["Subject": .string("Case \(account)-\(contact)-\($0)"),
                                                                                    "ContactId": .string("local_c\(account)_\(contact)")]) }
            }
        }, into: "Cases")
        try store.close()

        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, maxInFlight: settings.maxInFlight ?? 8, auth: settings.auth))
        }
        var figures = Figures()
        func run(_ pipeline: PipelineDefinition) async throws {
            let start = ContinuousClock.now
            let outcome = try await PipelineRunner(pipeline: pipeline, options: RunOptions(reportDirectory: folder + "/report-\(UUID().uuidString)"),
                                                   observer: QuietObserver(), orgConnector: connector).run()
            let elapsed = ContinuousClock.now - start
            guard outcome.exitCode == 0 else {
                throw StageFailure(.failed, "the graph benchmark run ended with exit code \(outcome.exitCode): \(outcome.report.stages.map { "\($0.counts) \($0.error ?? "")" })")
            }
            figures.milliseconds += Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            figures.requests += outcome.report.api.requests
            figures.created += outcome.report.stages[0].counts["created"] ?? 0
            figures.updated += outcome.report.stages[0].counts["updated"] ?? 0
        }
        try await run(first)
        guard !graph else { return figures }
        // The user's script points the cases at their contacts' new ids; then the cases go up.
        let contactStore = try SoupStore(path: first.store)
        let contacts = try await contactStore.entries(in: "Contacts", limit: accounts * 5 + 1)
        let contactIds = Dictionary(contacts.map { ($0["LastName"]!.stringValue!, $0["Id"]!) }, uniquingKeysWith: { $1 })
        var cases = try await contactStore.entries(in: "Cases", limit: accounts * 10 + 1)
        for index in cases.indices {
            let local = cases[index]["ContactId"]?.stringValue ?? ""
            let parts = local.dropFirst("local_c".count).split(separator: "_")
            cases[index]["ContactId"] = contactIds["Contact \(parts[0])-\(parts[1])"]
        }
        try await contactStore.upsert(cases, into: "Cases")
        try contactStore.close()
        try await run(try pipeline(#"[ { "id": "up", "type": "syncUp", "sync": "cases" } ]"#))
        // The user's script maps the parents' new ids and marks the accounts updated.
        let reopened = try SoupStore(path: first.store)
        let all = try await reopened.entries(in: "Accounts", limit: accounts + 1)
        let idByName = Dictionary(all.map { ($0["Name"]!.stringValue!, $0["Id"]!) }, uniquingKeysWith: { $1 })
        var children: [JSONObject] = []
        for var entry in all {
            guard let name = entry["Name"]?.stringValue, let index = Int(name.dropFirst("Account ".count)), let parent = parentOf(index) else { continue }
            entry["ParentId"] = idByName["Account \(parent)"]
            entry["__local__"] = true
            entry["__locally_updated__"] = true
            children.append(entry)
        }
        try await reopened.upsert(children, into: "Accounts")
        try reopened.close()
        try await run(try pipeline(#"[ { "id": "up", "type": "syncUp", "sync": "accounts" } ]"#))
        return figures
    }
}
