import Connectors
import Foundation
import JSON
import OrgEmulatorTesting
import Soups
import Stages
import Testing

/// `extract.soql` against an emulator over HTTP.
@Suite struct ExtractSOQLStageTests {
    /// Runs `stages` (JSON) with an org pointing at a fresh emulator.
    func run(_ stages: String, in directory: String) async throws -> (RunOutcome, PipelineDefinition) {
        let org = try await TestOrg.start()
        defer { Task { await org.stop() } }
        let pipeline = try loadPipeline("""
            { "org": { "instanceUrl": "\(org.instanceURL)", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } }, "stages": \(stages) }
            """, in: directory, variables: ["TOKEN": org.accessToken])
        let connector: OrgConnector = { configuration in
            guard case .remote(let settings) = configuration else { throw StageFailure(.failed, "expected a remote org") }
            return try SalesforceClient(settings: OrgConnectionSettings(instanceURL: settings.instanceUrl, auth: settings.auth))
        }
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver(), orgConnector: connector).run()
        return (outcome, pipeline)
    }

    func dataset(_ pipeline: PipelineDefinition, _ stage: String) async throws -> [JSONValue] {
        try await SoupStore.openForReading(path: pipeline.store).datasets.records(stage, limit: 10_000).map(\.record)
    }

    @Test func queryWithChildrenLandsInTheDataset() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, pipeline) = try await run("""
            [ { "id": "accounts", "type": "extract.soql",
                "query": "SELECT Id, Name, (SELECT LastName FROM Contacts ORDER BY LastName) FROM Account ORDER BY Name" },
              { "id": "count", "type": "test.count", "from": "accounts" } ]
            """, in: directory)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[0].counts == ["read": 3])
        #expect(outcome.report.stages[0].byObject == ["Account": ["read": 3]])
        #expect(outcome.report.stages[1].counts["read"] == 3)
        let records = try await dataset(pipeline, "accounts")
        #expect(records.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation", "Globex", "Initech"])
        #expect(records[0]["Contacts"]?["records"]?.arrayValue?.map { $0["LastName"]?.stringValue ?? "" } == ["Coyote", "Runner"])
        #expect(records[2]["Contacts"] == .null)
    }

    @Test func sobjectTypeFieldsAndWhereAreBuiltSafely() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, pipeline) = try await run("""
            [ { "id": "contacts", "type": "extract.soql", "sobjectType": "Contact", "fields": ["LastName", "Account.Name"],
                "where": "Account.Industry = 'Technology' OR LastName = 'Scorpio'" } ]
            """, in: directory)
        #expect(outcome.exitCode == 0)
        let records = try await dataset(pipeline, "contacts")
        #expect(Set(records.compactMap { $0["LastName"]?.stringValue }) == ["Coyote", "Runner", "Scorpio"])
    }

    @Test func bulkQueryJobsGiveFlatRecords() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, pipeline) = try await run("""
            [ { "id": "bulk", "type": "extract.soql", "bulk": true, "query": "SELECT Id, Name FROM Account ORDER BY Name" } ]
            """, in: directory)
        #expect(outcome.exitCode == 0)
        let records = try await dataset(pipeline, "bulk")
        #expect(records.map { $0["Name"]?.stringValue ?? "" } == ["Acme Corporation", "Globex", "Initech"])
        #expect(records[0]["attributes"]?["type"] == "Account")
    }

    @Test func aQueryTheOrgRejectsIsInvalidInput() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, _) = try await run(#"[ { "id": "bad", "type": "extract.soql", "query": "SELECT Nme FROM Account" } ]"#, in: directory)
        #expect(outcome.exitCode == 2)
        #expect(outcome.report.error?.hasPrefix("INVALID_FIELD: \nSELECT Nme FROM Account\n       ^\nERROR at Row:1:Column:8") == true)
    }

    @Test func malformedSettingsAreLocatedAtLoadTime() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "stages": [ { "id": "a", "type": "extract.soql", "query": "SELECT Id FROM" },
                          { "id": "b", "type": "extract.soql", "sobjectType": "Account", "fields": ["Name"], "where": "Name = " },
                          { "id": "c", "type": "extract.soql" },
                          { "id": "d", "type": "extract.soql", "bulk": true, "query": "SELECT COUNT() FROM Account" } ] }
            """, in: directory)
        #expect(errors == [
            "stages[0].query: MALFORMED_QUERY at row 1, column 15: unexpected token: <EOF>",
            "stages[1].where: MALFORMED_QUERY at row 1, column 8: unexpected token: <EOF>",
            "stages[2]: extract.soql needs a query, or an sobjectType with fields",
            "stages[3].bulk: Bulk API 2.0 query jobs take plain fields only (no subqueries or aggregates)",
        ])
    }
}
