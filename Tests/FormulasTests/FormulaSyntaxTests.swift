import Formulas
import Foundation
import Testing

/// Formulas refused when compiled — what `pipeline validate` reports, with the column.
@Suite struct FormulaSyntaxTests {
    static let cases: [(String, Int, String)] = [
        ("LOWR(TRIM(Email))", 1, "unknown function LOWR"), ("TRIM(LOWR(Email))", 6, "unknown function LOWR"),
        ("LEN(1, 2)", 1, "LEN takes 1 argument, not 2"), ("IF(TRUE, 1)", 1, "IF takes 3 arguments, not 2"),
        ("LEFT(\"a\")", 1, "LEFT takes 2 arguments"), ("TODAY(1)", 1, "TODAY takes 0 arguments"),
        ("CASE(x, 1, \"a\")", 1, "CASE takes at least 4 arguments"), ("CASE(x, 1, \"a\", 2, \"b\")", 1, "needs an else result"),
        ("1 +", 4, "ends too soon"), ("(1 + 2", 7, "missing )"), ("1 2", 3, "unexpected number 2"), ("\"abc", 1, "text is not closed"),
        ("UPPER(1)", 7, "UPPER expects text for argument 1, not number"), ("LEN(TODAY())", 5, "expects text"),
        ("1 + \"a\"", 5, "adds text to number"), ("\"a\" & 1", 7, "& (joining text"), ("IF(\"x\", 1, 2)", 4, "expects boolean"),
        ("IF(TRUE, 1, \"a\")", 1, "its results mix number and text"), ("TRUE + 1", 8, "adds number to boolean"),
        ("DATE(2024,1,1) + DATE(2024,1,1)", 18, "adds date to date"), ("1 < \"a\"", 5, "< compares number with text"),
        ("HYPERLINK(\"x\", \"y\")", 1, "only has a meaning in the org's user interface"), ("$User.Id", 1, "global variables"),
        ("", 1, "the formula is empty"), ("1 @ 2", 3, "unexpected character \"@\""), ("/* open", 1, "comment is not closed"),
        ("REGEX(x, \"[\")", 10, "is not a regular expression"), ("YEAR(NOW())", 6, "YEAR expects date"), ("Name..x", 1, "is not a field name"),
        ("ADDMONTHS(1, 2)", 1, "argument 1 must be date or date/time"), ("f(", 1, "unknown function f"), ("1.2.3", 1, "1.2.3 is not a number"),
        ("NOT 1", 5, "unexpected number"),
    ]

    @Test(arguments: cases)
    func isRefusedWithItsColumn(_ text: String, _ column: Int, _ message: String) {
        do throws(FormulaSyntaxError) {
            _ = try Formula(text)
            Issue.record("\(text) compiled")
        } catch {
            #expect(error.column == column, "\(text): \(error)")
            #expect(error.message.contains(message), "\(text): \(error)")
        }
    }

    @Test func deepNestingIsRefusedNotAStackOverflow() throws {
        let deep = String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000)
        #expect(throws: FormulaSyntaxError.self) { try Formula(deep) }
        let calls = String(repeating: "ABS(", count: 50_000) + "1" + String(repeating: ")", count: 50_000)
        #expect(throws: FormulaSyntaxError.self) { try Formula(calls) }
        // A flat chain nests no parentheses but builds as tall a tree: refused past 1,000.
        let chain = Array(repeating: "1", count: 100_000).joined(separator: " + ")
        #expect(throws: FormulaSyntaxError.self) { try Formula(chain) }
        #expect(try Formula(Array(repeating: "1", count: 900).joined(separator: " + ")).evaluate([:], now: Date()) == .number(900))
        #expect(throws: FormulaSyntaxError.self) { try Formula(String(repeating: "9", count: 400)) }
    }

    @Test func knownFieldTypesAreChecked() throws {
        #expect(throws: FormulaSyntaxError(column: 7, "UPPER expects text for argument 1, not number")) {
            try Formula("UPPER(size)", fieldTypes: ["Size": .number])
        }
        #expect(try Formula("Size * 2", fieldTypes: ["Size": .number]).type == .number)
        #expect(try Formula("Born + 30", fieldTypes: ["Born": .date]).type == .date)
    }

    @Test func staticTypesAreKnownWhereTheyCanBe() throws {
        #expect(try Formula("LEN(Name) > 40").type == .boolean)
        #expect(try Formula("LOWER(Email)").type == .text)
        #expect(try Formula("Amount * 2").type == .number)
        #expect(try Formula("Amount").type == .any)
        #expect(try Formula("IF(x, Amount, 0)").type == .number)
        #expect(try Formula("CloseDate + 30").type == .any)
        #expect(try Formula("DATE(2024,1,1) + Days").type == .date)
    }
}
