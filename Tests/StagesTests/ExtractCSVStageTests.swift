import Foundation
import JSON
import Soups
import Stages
import Testing

/// `extract.csv`: RFC 4180 edge cases, coercion, renames, constants and the rejects file.
@Suite struct ExtractCSVStageTests {
    func run(csv bytes: [UInt8], settings: String) async throws -> (RunOutcome, [JSONValue], String?) {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/data.csv"))
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "load", "type": "extract.csv", "file": "data.csv" \(settings.isEmpty ? "" : ", " + settings) } ] }
            """, in: directory)
        let outcome = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("load", limit: 1000).map(\.record)
            .map(Self.withoutLine)
        let rejects = try? String(contentsOfFile: outcome.report.reportDir + "/rejects/load.csv", encoding: .utf8)
        return (outcome, records, rejects)
    }

    /// A record without `attributes.line` (checked on its own below), and without `attributes`
    /// when the line was all it held.
    static func withoutLine(_ record: JSONValue) -> JSONValue {
        guard var object = record.objectValue, var attributes = object["attributes"]?.objectValue else { return record }
        attributes["line"] = nil
        object["attributes"] = attributes.isEmpty ? nil : .object(attributes)
        return .object(object)
    }

    /// Each record knows the physical line it starts on, so a later stage's rejects can name it.
    @Test func recordsCarryTheLineTheyStartOn() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("Name,Note\nA,\"two\nlines\"\nB,x,extra\nC,y\n".utf8).write(to: URL(fileURLWithPath: directory + "/data.csv"))
        let pipeline = try loadPipeline(#"{ "stages": [ { "id": "load", "type": "extract.csv", "file": "data.csv", "sobjectType": "Account" } ] }"#, in: directory)
        _ = try await PipelineRunner(pipeline: pipeline, observer: RecordingObserver()).run()
        let records = try await SoupStore.openForReading(path: pipeline.store).datasets.records("load", limit: 10).map(\.record)
        #expect(records.map { $0["attributes"] } == [["type": "Account", "line": 2], ["type": "Account", "line": 5]])
    }

    /// A folder named as the file is refused with what it is (reading it used to trap).
    @Test func aDirectoryIsRefusedNotRead() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/data.csv", withIntermediateDirectories: true)
        let errors = loadErrors(#"{ "stages": [ { "id": "load", "type": "extract.csv", "file": "data.csv" } ] }"#, in: directory)
        #expect(errors.contains { $0.hasSuffix("stages[0].file: \(directory)/data.csv is a directory, not a file") }, "\(errors)")
    }

    @Test func quotedFieldsEmbeddedQuotesCommasAndNewlines() async throws {
        let csv = "Name,Description,City\r\n\"Acme, Inc.\",\"He said \"\"hi\"\"\r\nand left\",Paris\r\nGlobex,,\"\"\r\nInitech,plain,Austin"
        let (outcome, records, rejects) = try await run(csv: Array(csv.utf8), settings: #""sobjectType": "Account""#)
        #expect(outcome.exitCode == 0)
        #expect(rejects == nil)
        #expect(records.count == 3)
        #expect(records[0] == ["attributes": ["type": "Account"], "Name": "Acme, Inc.", "Description": "He said \"hi\"\r\nand left", "City": "Paris"])
        // Empty cells are absent (the soup keeps its value) unless emptyAs is null.
        #expect(records[1] == ["attributes": ["type": "Account"], "Name": "Globex"])
        #expect(records[2]["City"] == "Austin")
    }

    @Test func byteOrderMarkLineFeedsDelimiterAndEncoding() async throws {
        let utf8 = [0xEF, 0xBB, 0xBF] + Array("Name;City\nCafé ✓;Zürich\n".utf8)
        let (first, records, _) = try await run(csv: utf8, settings: #""delimiter": ";""#)
        #expect(first.exitCode == 0)
        #expect(records == [["Name": "Café ✓", "City": "Zürich"]])

        let latin1: [UInt8] = Array("Name,City\n".utf8) + [0x43, 0x61, 0x66, 0xE9, 0x2C, 0x80, 0x0A]
        let (_, decoded, _) = try await run(csv: latin1, settings: #""encoding": "windows-1252""#)
        #expect(decoded == [["Name": "Café", "City": "€"]])
    }

    @Test func renamesTypesConstantsAndEmptyAsNull() async throws {
        let csv = "Account Name,Employees,Active,Since,Seen,Note\nAcme,1200,yes,31/01/2024,2024-01-31 09:30:00,\n"
        let (outcome, records, _) = try await run(csv: Array(csv.utf8), settings: """
            "columns": {"Account Name": "Name", "Employees": "NumberOfEmployees"},
            "types": {"NumberOfEmployees": "integer", "Active": "boolean", "Since": {"type": "date", "format": "dd/MM/yyyy"}, "Seen": "datetime"},
            "timeZone": "Europe/Paris", "constants": {"Source__c": "csv"}, "emptyAs": "null"
            """)
        #expect(outcome.exitCode == 0)
        #expect(records == [["Name": "Acme", "NumberOfEmployees": 1200, "Active": true, "Since": "2024-01-31",
                             "Seen": "2024-01-31T08:30:00.000Z", "Note": nil, "Source__c": "csv"]])
    }

    @Test func badRowsGoToTheRejectsFileAndTheRestLoads() async throws {
        var bytes = Array("Name,Employees\nAcme,10\nShort\nGlobex,lots\n\"Multi\nLine\",x\n".utf8)
        bytes += Array("Bad".utf8) + [0xFF] + Array(",3\nInitech,30\n\"Open,1\n".utf8)
        let (outcome, records, rejects) = try await run(csv: bytes, settings: #""types": {"Employees": "integer"}"#)
        #expect(outcome.exitCode == 3)
        #expect(outcome.report.status == .partial)
        #expect(outcome.report.stages[0].counts == ["read": 2, "rejected": 5])
        #expect(records.map { $0["Name"]?.stringValue ?? "" } == ["Acme", "Initech"])
        let lines = try #require(rejects).components(separatedBy: "\r\n")
        #expect(lines == [
            "line,reason,raw",
            "3,\"expected 2 columns, found 1\",Short",
            "4,column Employees: 'lots' is not an integer,\"Globex,lots\"",
            "5,column Employees: 'x' is not an integer,\"\"\"Multi\nLine\"\",x\"",
            "7,invalid UTF-8 in field 1,\"Bad\u{FFFD},3\"",
            "9,a quoted field is not closed before the end of the file,\"\"\"Open,1\n\"",
            "",
        ])
    }

    @Test func missingFilesAndHeadersAreInvalidInput() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Found by validate, before anything runs.
        let errors = loadErrors(#"{ "stages": [ { "id": "load", "type": "extract.csv", "file": "nope.csv" } ] }"#, in: directory)
        #expect(errors.contains { $0.hasSuffix("stages[0].file: no such file: \(directory)/nope.csv") }, "\(errors)")
        let (empty, _, _) = try await run(csv: [], settings: "")
        #expect(empty.exitCode == 2)
        #expect(empty.report.error?.hasSuffix("data.csv: the file is empty; a header row is required") == true)
    }

    @Test func settingsErrorsAreLocated() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let errors = loadErrors("""
            { "stages": [ { "id": "a", "type": "extract.csv", "delimiter": ";;", "encoding": "ebcdic", "types": {"X": "money"},
                            "emptyAs": "zero", "timeZone": "Mars/Olympus" } ] }
            """, in: directory)
        #expect(errors == [
            "stages[0].file: is required",
            "stages[0].delimiter: must be a single ASCII character, such as \",\" or \";\"",
            "stages[0].encoding: must be one of \"utf-8\", \"iso-8859-1\", \"windows-1252\", not \"ebcdic\"",
            "stages[0].timeZone: unknown time zone \"Mars/Olympus\"; use an IANA name such as Europe/Paris",
            "stages[0].types.X: must be one of string, integer, double, boolean, date, datetime, or {\"type\": …, \"format\": …}",
            "stages[0].emptyAs: must be one of \"absent\", \"null\", not \"zero\"",
        ])
    }
}
