import Foundation
import JSON
import Soups
import Stages
import Testing

/// `extract.xml`: records, attributes, nested child records, and malformed input.
@Suite struct ExtractXMLStageTests {
    func run(_ xml: String, settings: String) async throws -> (RunOutcome, [JSONValue]) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try write(xml, to: "data.xml", in: directory)
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "load", "type": "extract.xml", "file": "data.xml", \(settings) } ] }
            """, in: directory)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("load", limit: 10_000).map(\.record)
        return (outcome, records)
    }

    @Test func parentsWithChildrenBecomeQueryResultShapedTrees() async throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Accounts>
              <Account external="ACME-1">
                <Name>Acme &amp; Sons</Name>
                <Industry>Technology</Industry>
                <Contacts>
                  <Contact><LastName>Coyote</LastName><Email>wile@acme.example</Email></Contact>
                  <Contact><LastName>Runner</LastName></Contact>
                </Contacts>
              </Account>
              <Account external="GLOBEX-1"><Name><![CDATA[Globex <Corp>]]></Name></Account>
            </Accounts>
            """
        let (outcome, records) = try await run(xml, settings: """
            "record": "Account", "sobjectType": "Account",
            "children": [{"element": "Contact", "within": "Contacts", "sobjectType": "Contact", "relationship": "Contacts"}]
            """)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[0].counts == ["read": 2])
        #expect(records.count == 2)
        #expect(records[0] == [
            "attributes": ["type": "Account"], "external": "ACME-1", "Name": "Acme & Sons", "Industry": "Technology",
            "Contacts": ["totalSize": 2, "done": true, "records": [
                ["attributes": ["type": "Contact"], "LastName": "Coyote", "Email": "wile@acme.example"],
                ["attributes": ["type": "Contact"], "LastName": "Runner"],
            ]],
        ])
        #expect(records[1] == ["attributes": ["type": "Account"], "external": "GLOBEX-1", "Name": "Globex <Corp>"])
    }

    @Test func manyRecordsStreamInBatches() async throws {
        var xml = "<Rows>"
        for index in 0..<2500 { xml += "<Row id=\"\(index)\"><Value>v\(index)</Value></Row>" }
        xml += "</Rows>"
        let (outcome, records) = try await run(xml, settings: #""record": "Row""#)
        #expect(outcome.exitCode == 0)
        #expect(records.count == 2500)
        #expect(records[2499] == ["id": "2499", "Value": "v2499"])
    }

    @Test func malformedXMLStopsWithLineAndColumn() async throws {
        let xml = "<Accounts>\n  <Account><Name>Acme</Name></Account>\n  <Account><Name>Broken</Nme></Account>\n</Accounts>\n"
        let (outcome, _) = try await run(xml, settings: #""record": "Account""#)
        #expect(outcome.exitCode == 2)
        let error = try #require(outcome.report.error)
        #expect(error.hasSuffix("data.xml: line 3, column 30: an element is closed with another element's name"))
    }

    @Test func settingsAreChecked() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "stages": [ { "id": "a", "type": "extract.xml", "children": [{"within": "X"}, {"element": "C", "extra": 1}] } ] }
            """, in: directory)
        #expect(errors == [
            "stages[0].file: is required",
            "stages[0].record: is required",
            "stages[0].children[0]: must be an object with at least \"element\"",
            "stages[0].children[1].extra: unknown key; expected element, within, sobjectType, relationship",
        ])
    }
}
