import Testing

@testable import SOQL

/// SplitMix64: a small deterministic generator, so every run feeds the parser the same inputs.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

@Suite struct RobustnessTests {
    static let seeds = PrinterTests.roundTripQueries + [
        "SELECT Id FROM Account WHERE Name = 'it\\'s' AND CreatedDate = LAST_N_DAYS:7",
        "SELECT Name, (SELECT Id FROM Contacts WHERE Id IN (SELECT WhoId FROM Task)) FROM Account",
    ]

    static let fragments = [
        "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "NOT IN", "LIKE", "INCLUDES", "EXCLUDES", "ORDER BY",
        "LIMIT", "OFFSET", "NULLS", "FIRST", "LAST", "DESC", "ASC", "COUNT()", "COUNT(", "MAX(", "(", ")", ",", "=",
        "!=", "<>", "<", "<=", ">", ">=", ":", ".", "'", "'x'", "'\\'", "\\u", "\\ud83d", "\"", "Id", "Name",
        "Account.Name", "a.b.c", "null", "TRUE", "42", "-1", "3.14", "99999999999999999999", "2024-01-31",
        "2024-02-30", "2024-01-31T12:00:00Z", "2024-01-31T12:00:00.123+05:30", "2024-01-31T25:00:00Z",
        "TODAY", "LAST_N_DAYS", "LAST_N_DAYS:", "N_DAYS_AGO:3", "\n", " ", "\t", "é", "😀", ";", "%", "_",
    ]

    /// Parses `text` both ways; a successful parse must print back to an equal AST.
    static func check(_ text: String) {
        do {
            let query = try SOQL.parseQuery(text)
            #expect(try SOQL.parseQuery(query.description) == query, "round trip of \(text.debugDescription)")
        } catch {
            #expect(error.row >= 1 && error.column >= 1)
            #expect(error.message.contains("\nERROR at Row:\(error.row):Column:\(error.column)\n"))
        }
        do {
            let condition = try SOQL.parseCondition(text)
            #expect(try SOQL.parseCondition(condition.description) == condition, "round trip of \(text.debugDescription)")
        } catch {
            #expect(error.errorCode == .malformedQuery)
        }
    }

    @Test func mutatedQueriesNeverCrashTheParser() {
        var generator = SeededGenerator(seed: 0x50_51_4C)
        let alphabet = Array("SELECTFROMWHEREANDORNOTIN abcxyz_.,()'\"\\:=<>!%;-+0123456789TZ\n\té😀")
        var parsed = 0
        for round in 0..<4000 {
            var characters = Array(Self.seeds[round % Self.seeds.count])
            for _ in 0...Int.random(in: 0...4, using: &generator) {
                let position = Int.random(in: 0...characters.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: characters.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1 where position < characters.count: characters.remove(at: position)
                case 2 where position < characters.count:
                    characters[position] = alphabet.randomElement(using: &generator)!
                default:
                    let fragment = Self.fragments.randomElement(using: &generator)!
                    characters.insert(contentsOf: " \(fragment) ", at: position)
                }
            }
            let text = String(characters)
            if (try? SOQL.parseQuery(text)) != nil { parsed += 1 }
            Self.check(text)
        }
        #expect(parsed > 100, "the mutations should leave some queries valid")
    }

    @Test func randomTokenSoupNeverCrashesTheParser() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let count = Int.random(in: 0...30, using: &generator)
            let text = (0..<count).map { _ in Self.fragments.randomElement(using: &generator)! }.joined(separator: " ")
            Self.check(text)
        }
    }

    @Test func randomBytesNeverCrashTheParser() {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<1000 {
            let bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            Self.check(String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test func deepInputsAreRefusedNotOverflowed() {
        for text in [
            String(repeating: "(", count: 100_000),
            String(repeating: "NOT ", count: 50_000) + "A = 1",
            String(repeating: "SELECT Id, (", count: 5_000),
            "A IN " + String(repeating: "(SELECT Id FROM X WHERE Id IN ", count: 5_000),
            String(repeating: "A = 1 AND ", count: 20_000) + "A = 1",
        ] {
            Self.check(text)
        }
        #expect(throws: SOQLError.self) { try SOQL.parseCondition(String(repeating: "(", count: 100_000)) }
    }
}
