import Foundation
import JSON
import SOQL
import Soups
import Stages
import Testing

/// `:VAR` binds a variable into SOQL as an escaped literal, so a value can never change the
/// query: the "delete one account by name" pipeline that deleted two accounts when the name was
/// spliced in with `${VAR}`.
@Suite struct SOQLBindTests {
    static let hostile = "nobody' OR Name != 'nobody"

    @Test func aBindIsOneLiteralWhateverItHolds() throws {
        let bound = SOQLBinding.bind("Name = :ACCOUNT_NAME AND CreatedDate > LAST_N_DAYS:3", values: ["ACCOUNT_NAME": Self.hostile])
        #expect(bound.unset.isEmpty)
        #expect(bound.text == #"Name = 'nobody\' OR Name != \'nobody' AND CreatedDate > LAST_N_DAYS:3"#)
        let condition = try SOQL.parseCondition(bound.text)
        #expect(condition.description == #"Name = 'nobody\' OR Name != \'nobody' AND CreatedDate > LAST_N_DAYS:3"#)
        // Inside a literal, `:NAME` is text; an unset bind is reported.
        #expect(SOQLBinding.bind("Name = ':X'", values: ["X": "y"]).text == "Name = ':X'")
        #expect(SOQLBinding.bind("Name = :MISSING", values: [:]).unset == ["MISSING"])
    }

    /// End to end: markDirty with a bound name marks nothing when the name matches nothing,
    /// where the spliced `${VAR}` form marked every account.
    @Test func aHostileNameMarksNothing() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try write("Name\nAcme\nGlobex\n", to: "accounts.csv", in: directory)
        func pipeline(_ condition: String) throws -> PipelineDefinition {
            try loadPipeline("""
                { "store": "store.sqlite",
                  "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Name", "type": "string" } ] } ],
                  "stages": [ { "id": "extract", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account" },
                              { "id": "load", "type": "stage", "from": "extract", "soup": "Accounts", "matchOn": "Name" },
                              { "id": "mark", "type": "markDirty", "after": ["load"], "soup": "Accounts", "as": "deleted",
                                "where": "\(condition)" } ] }
                """, in: directory, variables: ["ACCOUNT_NAME": Self.hostile])
        }
        let bound = try pipeline("Name = :ACCOUNT_NAME")
        #expect(bound.warnings.isEmpty)
        _ = try await PipelineRunner(pipeline: bound, observer: RecordingObserver()).run()
        #expect(try await SoupStore.openForReading(path: bound.store).counts(of: "Accounts").dirty == 0)

        let spliced = try pipeline("Name = '${ACCOUNT_NAME}'")
        #expect(spliced.warnings.map(\.description).contains { $0.contains("stages[2].where") && $0.contains(":ACCOUNT_NAME") },
                "validate warns about ${…} inside a quoted literal: \(spliced.warnings)")
    }

    @Test func anUnsetBindIsAnErrorWithItsPlace() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Name", "type": "string" } ] } ],
              "stages": [ { "id": "mark", "type": "markDirty", "soup": "Accounts", "where": "Name = :NOPE" } ] }
            """, in: directory)
        #expect(errors == ["stages[0].where: bind :NOPE has no value (use --var NOPE=…, --var-file, or the environment)"])
        let unterminated = loadErrors(#"{ "name": "${NOPE", "stages": [] }"#, in: directory)
        #expect(unterminated == [#"name: "${NOPE" has no closing "}" (write $${ for a literal ${)"#])
    }
}
