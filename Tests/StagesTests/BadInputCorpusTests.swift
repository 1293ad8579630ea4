import Connectors
import Foundation
import Formats
import Formulas
import JSON
import OrgEmulator
import SOQL
import Soups
import Stages
import Testing

/// The bad-input corpus (`Tests/BadInput`, made by its `generate.py`): pipeline files, CSV and XML
/// files, SOQL strings and emulator seeds that users get wrong. Each is refused with the file and
/// the place, or loaded row by row with the bad rows in the rejects file — never a crash, a hang,
/// a partial load reported as success, or a change to what the store already held.
@Suite struct BadInputCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("BadInput").path

    static func cases(_ kind: String) -> [String] {
        let directory = root + "/" + kind
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted().map { directory + "/" + $0 }
    }

    @Test func theCorpusHasItsCases() {
        let counts = ["pipelines", "csv", "xml", "seeds"].map { Self.cases($0).count } + [Self.soqlCases.count, Self.formulaCases.count]
        #expect(counts.allSatisfy { $0 >= 25 }, "\(counts)")
        #expect(counts.reduce(0, +) + 2 >= 150, "at least 150 cases in all (two are made here)")
    }

    // MARK: Pipeline files

    @Test(arguments: cases("pipelines"))
    func pipelineFileIsRefusedWithItsPlace(path: String) {
        expectRefused(path)
    }

    /// A 31,000-stage cycle is reported (the check used to recurse once per stage and overflow).
    @Test func aVeryLongCycleIsReported() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = 31_000
        let stages = (0..<count).map { #"{"id":"s\#($0)","type":"extract.csv","file":"d.csv","after":["s\#(($0 + 1) % count)"]}"# }
        let path = try write(#"{"stages":[\#(stages.joined(separator: ","))]}"#, to: "cycle.json", in: directory)
        let messages = expectRefused(path)
        #expect(messages.contains { $0.contains("cycle") })
    }

    @discardableResult
    func expectRefused(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        do {
            _ = try PipelineLoader(variables: VariableResolver(variables: ["TOKEN": "t0ken"])).load(path: path)
            Issue.record("\(path) loaded", sourceLocation: sourceLocation)
            return []
        } catch {
            let errors = error.diagnostics.filter { $0.severity == .error }
            #expect(!errors.isEmpty, sourceLocation: sourceLocation)
            for diagnostic in errors {
                #expect(diagnostic.file == path || diagnostic.file.hasSuffix(".csv"), "names the file: \(diagnostic)", sourceLocation: sourceLocation)
                #expect(!diagnostic.location.isEmpty || diagnostic.message.contains("line"), "names the place: \(diagnostic)",
                        sourceLocation: sourceLocation)
                #expect(!diagnostic.description.contains("t0ken"), "no secret in \(diagnostic)", sourceLocation: sourceLocation)
            }
            return errors.map(\.description)
        }
    }

    // MARK: CSV and XML files

    /// Stages `file` into a soup that already holds a record, through `extract` + `stage`.
    func stage(_ file: String, extract: String, in directory: String) async throws -> (RunOutcome, before: Int, after: Int, store: String) {
        let name = (file as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        try FileManager.default.copyItem(atPath: file, toPath: directory + "/data." + ext)
        try (ext == "csv" ? "Name,Phone\nExisting,0\n" : "<Accounts><Account><Name>Existing</Name></Account></Accounts>")
            .write(toFile: directory + "/good." + ext, atomically: true, encoding: .utf8)
        func pipeline(_ data: String) throws -> PipelineDefinition {
            try loadPipeline("""
                { "store": "store.sqlite",
                  "soups": [ { "soupName": "Accounts", "indexes": [ { "path": "Name", "type": "string" } ] } ],
                  "stages": [ { "id": "extract", "type": "\(extract)", "file": "\(data)", "sobjectType": "Account" \(ext == "xml" ? #", "record": "Account""# : "") },
                              { "id": "load", "type": "stage", "from": "extract", "soup": "Accounts", "matchOn": "Name" } ] }
                """, in: directory)
        }
        _ = try await PipelineRunner(pipeline: try pipeline("good." + ext), observer: RecordingObserver()).run()
        let definition = try pipeline("data." + ext)
        let before = try await SoupStore.openForReading(path: definition.store).counts(of: "Accounts").total
        let outcome = try await PipelineRunner(pipeline: definition, observer: RecordingObserver()).run()
        let after = try await SoupStore.openForReading(path: definition.store).counts(of: "Accounts").total
        return (outcome, before, after, definition.store)
    }

    @Test(arguments: cases("csv"))
    func csvFile(path: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, before, after, store) = try await stage(path, extract: "extract.csv", in: directory)
        let name = (path as NSString).lastPathComponent
        if name.contains(".fail.") {
            #expect(outcome.exitCode == 2, "\(name): \(outcome.report.stages)")
            #expect(outcome.report.error?.contains("data.csv") == true, "names the file: \(outcome.report.error ?? "")")
            #expect(after == before, "\(name): nothing staged")
        } else if name.contains(".reject.") {
            #expect(outcome.exitCode == 3, "\(name): \(outcome.report.stages)")
            let rows = try rejectRows(outcome)
            #expect(!rows.isEmpty, "\(name): rejected rows listed")
            for row in rows {
                #expect(Int(row[0]).map { $0 > 1 } == true && !row[1].isEmpty, "\(name): a line number and a reason: \(row.joined(separator: ",").prefix(80))")
            }
            #expect(after > before, "\(name): the good rows load")
        } else {
            #expect(outcome.exitCode == 0, "\(name): \(outcome.report.stages)")
            #expect(after == before + 1)
            let entries = try await SoupStore.openForReading(path: store).entries(in: "Accounts", limit: 10)
            #expect(entries.allSatisfy { $0["Name"]?.stringValue?.isEmpty == false }, "\(name): every record has its Name")
        }
    }

    /// The rows of the extract stage's rejects file (`line,reason,raw`), read as CSV: a raw row
    /// may span lines.
    func rejectRows(_ outcome: RunOutcome) throws -> [[String]] {
        try CSVReader(path: outcome.report.reportDir + "/rejects/extract.csv").dropFirst().compactMap { row in
            if case .fields(let fields, _) = row, fields.count == 3 { return fields }
            Issue.record("unreadable rejects row: \(row)")
            return nil
        }
    }

    @Test(arguments: cases("xml"))
    func xmlFile(path: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, before, after, _) = try await stage(path, extract: "extract.xml", in: directory)
        let name = (path as NSString).lastPathComponent
        if name.contains(".fail.") {
            #expect(outcome.exitCode == 2, "\(name): \(outcome.report.stages)")
            let error = outcome.report.error ?? ""
            #expect(error.contains("data.xml") && error.contains("line"), "names the file and the line: \(error)")
            #expect(after == before, "\(name): nothing of a broken file is staged")
        } else {
            #expect(outcome.exitCode == 0, "\(name): \(outcome.report.stages)")
            #expect(after == before + 1)
        }
    }

    /// A well-formed file with a 10 MB attribute is refused for what it is, not as "parser error 1".
    @Test func aTenMegabyteAttributeIsNamed() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try write(#"<Accounts><Account Id=""# + String(repeating: "x", count: 10_500_000) + #""/></Accounts>"#, to: "huge.fail.xml", in: directory)
        let (outcome, before, after, _) = try await stage(path, extract: "extract.xml", in: directory)
        #expect(outcome.exitCode == 2)
        #expect(outcome.report.error?.contains("10,000,000-byte limit") == true, "\(outcome.report.error ?? "")")
        #expect(after == before)
    }

    // MARK: SOQL

    static let soqlCases: [String] = (try? String(contentsOfFile: root + "/soql/refused.txt", encoding: .utf8))?
        .components(separatedBy: "\n").filter { !$0.isEmpty } ?? []

    @Test(arguments: soqlCases)
    func soqlIsRefusedWithRowAndColumn(query: String) {
        do {
            _ = try SOQL.parseQuery(query)
            Issue.record("parsed: \(query)")
        } catch {
            #expect(error.row >= 1 && error.column >= 1)
            #expect(error.errorCode == .malformedQuery)
        }
    }

    // MARK: Formulas

    static let formulaCases: [String] = (try? String(contentsOfFile: root + "/formulas/refused.txt", encoding: .utf8))?
        .components(separatedBy: "\n").dropLast().map { $0 } ?? []

    @Test(arguments: formulaCases)
    func formulaIsRefusedWithColumn(formula: String) {
        do throws(FormulaSyntaxError) {
            _ = try Formula(formula)
            Issue.record("compiled: \(formula)")
        } catch {
            #expect(error.column >= 1 && error.column <= formula.count + 1)
            #expect(!error.message.isEmpty)
        }
    }

    // MARK: Emulator seeds

    @Test(arguments: cases("seeds"))
    func seedIsRefusedWithItsPlace(path: String) {
        do {
            _ = try OrgSeed.load(path: path)
            Issue.record("\(path) loaded")
        } catch {
            #expect(error.file == path)
            #expect(!error.location.isEmpty || error.message.contains("read") || error.message.contains("empty"), "\(error)")
        }
    }
}
