import Foundation
import Formats
import JSON
import Testing

/// The one CSV writer and the one reader agree: whatever a field holds comes back as written,
/// in every delimiter and quoting mode the product and the emulator use.
@Suite struct CSVRoundTripTests {
    static let awkward = ["plain", "", "with,comma", "with \"quotes\"", "line\nbreak", "crlf\r\nbreak", "trailing ", "é ñ 漢字", "tab\there"]

    @Test(arguments: [",", "\t", "|", ";", "^", "`"] as [Character], [false, true])
    func writtenRowsReadBackExactly(delimiter: Character, quoteAll: Bool) throws {
        let rows = [Self.awkward, Self.awkward.reversed()]
        let text = rows.map { CSVLine.encode($0, delimiter: delimiter, quoteAll: quoteAll) }.joined(separator: "\r\n")
        #expect(try CSVReader.rows(of: text, delimiter: delimiter) == rows)
    }

    @Test func fieldsAreQuotedOnlyWhenNeeded() {
        #expect(CSVLine.encode(["a", "b c", "d,e", "f\"g", "h\ni"]) == "a,b c,\"d,e\",\"f\"\"g\",\"h\ni\"")
        #expect(CSVLine.encode(["a", ""], quoteAll: true) == "\"a\",\"\"")
    }

    @Test func aMalformedRowNamesItsLine() {
        #expect(throws: CSVReader.MalformedRow.self) { try CSVReader.rows(of: "a,b\nc,\"d\n") }
        do {
            _ = try CSVReader.rows(of: "a,b\n\"c\"x,d\n")
        } catch {
            #expect(error.line == 2)
            #expect(error.reason == "text after the closing quote of field 1")
        }
    }
}

/// Record ids: one key for a 15- and an 18-character spelling, checksums checked.
@Suite struct SalesforceIdTests {
    @Test func bothSpellingsShareOneKey() throws {
        let id = SalesforceId.make(prefix: "001", counter: 12_345)
        #expect(id.count == 18)
        #expect(SalesforceId.key(.string(id)) == SalesforceId.key(.string(String(id.prefix(15)))))
        #expect(SalesforceId.normalize(String(id.prefix(15))) == id)
        #expect(SalesforceId.normalize(id.lowercased()) == id, "the 18-character form is case-insensitive")
        #expect(SalesforceId.normalize(String(id.prefix(15)) + "ZZZ") == nil, "a wrong checksum is refused")
        #expect(SalesforceId.normalize("not an id") == nil)
        #expect(SalesforceId.key(nil) == "")
        // Salesforce's documented example, in both spellings and any case.
        #expect(SalesforceId.normalize("001xx000003DGb1") == "001xx000003DGb1AAG")
        #expect(SalesforceId.normalize("001XX000003DGB1AAG") == "001xx000003DGb1AAG")
        #expect(SalesforceId.normalize("001xx000003DGb1AA-") == nil)
        #expect(SalesforceId.normalize("001xx000003DGé1") == nil)
        #expect(SalesforceId.make(prefix: "001", counter: 61) == "0010S000000000zQAA")
    }
}

/// `bytesRead`: how far into its source a reader is, for progress against the file's size.
@Suite struct CSVProgressTests {
    @Test func bytesReadReachesTheSourceSize() throws {
        // Long enough for several 64 KiB chunks, with a byte order mark and multi-byte text.
        var text = "\u{FEFF}Name,Note\r\n"
        for index in 0..<20_000 { text += "Row \(index),\"Grüße, \"\"quoted\"\"\"\r\n" }
        let path = NSTemporaryDirectory() + "progress-\(UUID().uuidString).csv"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var rows = try CSVReader(path: path).makeIterator()
        var last = 0
        var count = 0
        while let row = rows.next() {
            if case .fields = row { count += 1 }
            #expect(rows.bytesRead >= last, "never goes back")
            last = rows.bytesRead
        }
        #expect(count == 20_001)
        #expect(rows.bytesRead == text.utf8.count)
    }
}
