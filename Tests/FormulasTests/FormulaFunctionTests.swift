import Foundation
import Formulas
import JSON
import Testing

/// Every function and operator against values from Salesforce's formula reference (blank rules
/// included): https://help.salesforce.com/s/articleView?id=platform.customize_functions.htm
@Suite struct FormulaFunctionTests {
    /// 2024-06-15T12:30:00Z, a Saturday.
    static let now = Date(timeIntervalSince1970: 1_718_454_600)
    static let record: JSONObject = [
        "Name": "  Acme Corp  ", "Code": "A", "Amount": 1250.5, "Count": 3, "Empty": "", "Nothing": .null,
        "Flag": true, "FlagText": "true", "Close": "2024-01-31", "Stamp": "2024-01-31T10:00:00.000+0000", "Number": "12.5",
        "Account": ["Name": "Parent Inc", "Owner": ["Alias": "jdoe"]], "Account.Region": "EMEA",
    ]

    static func value(_ text: String, _ record: JSONObject = record) throws -> FormulaValue {
        try Formula(text).evaluate(record, now: now)
    }

    static func date(_ text: String) -> FormulaValue { .date(FormulaCalendar.parseDate(Substring(text))!) }

    static let cases: [(String, FormulaValue)] = [
        // Operators and precedence
        ("1 + 2 * 3", .number(7)), ("(1 + 2) * 3", .number(9)), ("2 ^ 3", .number(8)), ("-2 ^ 2", .number(-4)),
        ("7 / 2", .number(3.5)), ("2 ^ -1", .number(0.5)), ("\"a\" & \"b\" = \"ab\"", .boolean(true)),
        ("TRUE || FALSE && FALSE", .boolean(true)), ("!FALSE", .boolean(true)), ("1 == 1 && 2 != 3", .boolean(true)),
        ("\"A\" & Nothing", .text("A")), ("Nothing & \"B\"", .text("B")), ("Nothing & Empty", .blank),
        ("Amount + 1", .number(1251.5)), ("Missing + 1", .blank), ("Missing * 2", .blank), ("\"x\" + \"y\"", .text("xy")),
        ("Number * 2", .number(25)), ("Count = 3", .boolean(true)), ("Nothing = Empty", .boolean(true)),
        ("Nothing = 0", .boolean(false)), ("Nothing < 5", .boolean(false)), ("Nothing >= 5", .boolean(false)),
        ("Nothing <> 5", .boolean(true)), ("\"b\" > \"a\"", .boolean(true)), ("\"a\" = \"A\"", .boolean(false)),
        ("DATE(2024,1,2) > DATE(2024,1,1)", .boolean(true)),
        // Dates and date/times
        ("DATE(2024,3,1) - DATE(2024,2,1)", .number(29)), ("DATE(2024,1,31) + 1", date("2024-02-01")),
        ("1 + DATE(2024,1,31)", date("2024-02-01")), ("DATE(2024,1,1) - 1", date("2023-12-31")),
        ("DATETIMEVALUE(\"2024-01-02 12:00:00\") - DATETIMEVALUE(\"2024-01-01 00:00:00\")", .number(1.5)),
        ("TEXT(DATETIMEVALUE(\"2024-01-31 10:00:00\") + 0.5)", .text("2024-01-31 22:00:00Z")),
        ("Close + 30", date("2024-03-01")), ("Close - DATE(2024,1,1)", .number(30)),
        ("TODAY()", date("2024-06-15")), ("TEXT(NOW())", .text("2024-06-15 12:30:00Z")),
        ("ADDMONTHS(DATE(2024,2,29), 1)", date("2024-03-31")), ("ADDMONTHS(DATE(2023,2,28), 1)", date("2023-03-31")),
        ("ADDMONTHS(DATE(2024,4,30), 1)", date("2024-05-31")), ("ADDMONTHS(DATE(2024,1,31), 1)", date("2024-02-29")),
        ("ADDMONTHS(DATE(2023,1,31), 1)", date("2023-02-28")), ("ADDMONTHS(DATE(2024,2,28), 1)", date("2024-03-28")),
        ("ADDMONTHS(DATE(2024,1,15), -13)", date("2022-12-15")), ("ADDMONTHS(Close, 1)", date("2024-02-29")),
        ("ADDMONTHS(Nothing, 1)", .blank),
        ("YEAR(DATE(2024,1,31))", .number(2024)), ("MONTH(Close)", .number(1)), ("DAY(Close)", .number(31)),
        ("WEEKDAY(DATE(2024,1,31))", .number(4)), ("WEEKDAY(DATE(2024,6,16))", .number(1)), ("WEEKDAY(DATE(2024,6,15))", .number(7)),
        ("YEAR(Nothing)", .blank), ("DATEVALUE(\"2024-02-29\")", date("2024-02-29")), ("DATEVALUE(Stamp)", date("2024-01-31")),
        ("DATEVALUE(Nothing)", .blank), ("TEXT(DATETIMEVALUE(DATE(2024,1,31)))", .text("2024-01-31 00:00:00Z")),
        ("TEXT(DATETIMEVALUE(Stamp))", .text("2024-01-31 10:00:00Z")), ("TEXT(DATE(2024,1,5))", .text("2024-01-05")),
        // Logical
        ("IF(TRUE, 1, 2)", .number(1)), ("IF(Nothing, 1, 2)", .number(2)), ("IF(1 > 2, \"a\", \"b\")", .text("b")),
        ("IF(TRUE, 1, VALUE(\"abc\"))", .number(1)),
        ("CASE(2, 1, \"a\", 2, \"b\", \"z\")", .text("b")), ("CASE(9, 1, \"a\", \"z\")", .text("z")),
        ("CASE(Code, \"A\", \"Active\", \"I\", \"Inactive\", \"Unknown\")", .text("Active")), ("CASE(Nothing, \"\", \"empty\", \"other\")", .text("empty")),
        ("AND(TRUE, Flag, FlagText)", .boolean(true)), ("AND(Nothing, TRUE)", .boolean(false)), ("OR(FALSE, Nothing)", .boolean(false)),
        ("OR(FALSE, 1 = 1)", .boolean(true)), ("NOT(Flag)", .boolean(false)),
        ("ISBLANK(Empty)", .boolean(true)), ("ISBLANK(Missing)", .boolean(true)), ("ISBLANK(Name)", .boolean(false)), ("ISBLANK(0)", .boolean(false)),
        ("ISNULL(Nothing)", .boolean(true)), ("BLANKVALUE(Nothing, \"x\")", .text("x")), ("BLANKVALUE(Code, \"x\")", .text("A")),
        ("NULLVALUE(Missing, 0)", .number(0)),
        ("ISNUMBER(\"2E2\")", .boolean(true)), ("ISNUMBER(\"1 000\")", .boolean(false)), ("ISNUMBER(\"123,12\")", .boolean(false)),
        ("ISNUMBER(Nothing)", .boolean(false)), ("ISNUMBER(Number)", .boolean(true)), ("ISPICKVAL(Code, \"A\")", .boolean(true)),
        ("ISPICKVAL(Nothing, \"\")", .boolean(true)),
        // Text
        ("TEXT(1234.5)", .text("1234.5")), ("TEXT(200000)", .text("200000")), ("TEXT(0.5)", .text("0.5")), ("TEXT(Nothing)", .blank),
        ("TEXT(1000000000 * 100000000000)", .text("100000000000000000000")), ("TEXT(0.00000015)", .text("0.00000015")),
        ("VALUE(\"12.50\")", .number(12.5)), ("VALUE(Nothing)", .blank), ("VALUE(\"-3\") * 2", .number(-6)),
        ("UPPER(\"abc\")", .text("ABC")), ("LOWER(\"Mixed Case\")", .text("mixed case")), ("UPPER(Nothing)", .blank),
        ("TRIM(Name)", .text("Acme Corp")), ("TRIM(\"\\t x \\t\")", .text("x")), ("TRIM(\"   \")", .blank),
        ("LEFT(\"Salesforce\", 5)", .text("Sales")), ("LEFT(\"abc\", -1)", .blank), ("LEFT(\"abc\", 10)", .text("abc")), ("LEFT(Nothing, 2)", .blank),
        ("RIGHT(\"Salesforce\", 5)", .text("force")), ("RIGHT(\"abc\", 0)", .blank),
        ("MID(\"Salesforce\", 6, 3)", .text("for")), ("MID(\"abc\", 5, 2)", .blank), ("MID(\"abc\", 0, 2)", .text("ab")),
        ("LEN(\"Salesforce\")", .number(10)), ("LEN(Nothing)", .number(0)), ("LEN(Name)", .number(13)),
        ("SUBSTITUTE(\"a-b-c\", \"-\", \"+\")", .text("a+b+c")), ("SUBSTITUTE(\"abc\", \"\", \"x\")", .text("abc")),
        ("SUBSTITUTE(Nothing, \"a\", \"b\")", .blank), ("SUBSTITUTE(\"aaa\", \"aa\", \"b\")", .text("ba")), ("SUBSTITUTE(\"abc\", \"b\", \"\")", .text("ac")),
        ("CONTAINS(\"Salesforce\", \"force\")", .boolean(true)), ("CONTAINS(\"Salesforce\", \"Force\")", .boolean(false)),
        ("CONTAINS(\"abc\", \"\")", .boolean(true)), ("CONTAINS(Nothing, \"a\")", .boolean(false)),
        ("BEGINS(\"Salesforce\", \"Sales\")", .boolean(true)), ("BEGINS(\"Salesforce\", \"sales\")", .boolean(false)), ("BEGINS(\"abc\", Nothing)", .boolean(true)),
        ("FIND(\"force\", \"Salesforce\")", .number(6)), ("FIND(\"E\", \"Salesforce\")", .number(0)), ("FIND(\"s\", \"Salesforce\", 4)", .number(5)),
        ("FIND(\"s\", \"Salesforce\", 0)", .number(0)), ("FIND(\"abc\", \"abcd\", 3)", .number(0)), ("FIND(\"cd\", \"abcd\", 3)", .number(3)), ("FIND(\"s\", \"Salesforce\", 11)", .number(0)), ("FIND(\"a\", Nothing)", .number(0)),
        ("REGEX(\"ab12\", \"[a-z]+[0-9]+\")", .boolean(true)), ("REGEX(\"xab12 \", \"[a-z]+[0-9]+\")", .boolean(false)),
        ("REGEX(\"999-99-9999\", \"[0-9]{3}-[0-9]{2}-[0-9]{4}\")", .boolean(true)), ("REGEX(Code, Code)", .boolean(true)),
        ("LPAD(\"7\", 3, \"0\")", .text("007")), ("LPAD(\"mycompany.com\", 2)", .text("my")), ("LPAD(\"ab\", 5)", .text("   ab")),
        ("LPAD(\"x\", 6, \"ab\")", .text("ababax")), ("RPAD(\"7\", 3, \"0\")", .text("700")), ("RPAD(\"abc\", 2, \"z\")", .text("ab")),
        // Math
        ("ROUND(1.5, 0)", .number(2)), ("ROUND(-1.5, 0)", .number(-2)), ("ROUND(2.5, 0)", .number(3)), ("ROUND(2.675, 2)", .number(2.68)),
        ("ROUND(1234.5678, -2)", .number(1200)), ("ROUND(Nothing, 2)", .blank), ("ROUND(Amount, 0)", .number(1251)),
        ("FLOOR(2.5)", .number(2)), ("FLOOR(-2.5)", .number(-2)), ("CEILING(2.5)", .number(3)), ("CEILING(-2.5)", .number(-3)),
        ("TRUNC(-2.7)", .number(-2)), ("TRUNC(3.14159, 2)", .number(3.14)), ("ABS(-4)", .number(4)), ("SQRT(16)", .number(4)),
        ("MAX(1, 7, 3)", .number(7)), ("MIN(1, 7, 3)", .number(1)), ("MAX(1, Nothing)", .blank),
        ("MOD(10, 3)", .number(1)), ("MOD(-10, 3)", .number(-1)), ("MOD(Nothing, 3)", .blank),
        // Fields
        ("Account.Name", .text("Parent Inc")), ("Account.Owner.Alias", .text("jdoe")), ("Account.Region", .text("EMEA")),
        ("account.name", .text("Parent Inc")), ("NAME = \"  Acme Corp  \"", .boolean(true)), ("Account.Missing.Field", .blank),
        ("/* a comment */ 1 + 1", .number(2)), ("'single' & \"double\"", .text("singledouble")), ("null", .blank),
    ]

    @Test(arguments: cases)
    func evaluates(_ formula: String, _ expected: FormulaValue) throws {
        #expect(try Self.value(formula) == expected, "\(formula)")
    }

    static let failures: [(String, String)] = [
        ("VALUE(\"abc\")", "VALUE: \"abc\" is not a number"), ("DATE(2023, 2, 29)", "DATE: 2023-02-29 is not a date"),
        ("DATE(2024, 4, 31)", "not a date"), ("1 / 0", "division by zero"), ("MOD(1, 0)", "MOD: division by zero"),
        ("SQRT(-1)", "negative"), ("DATEVALUE(\"31/12/2024\")", "DATEVALUE: \"31/12/2024\" is not a date"),
        ("Name * 2", "is not a number"), ("Account * 2", "Account is object"), ("REGEX(Code, \"[\" & Code)", "not a regular expression"),
        ("10 ^ 400", "not a finite number"), ("LPAD(\"x\", 999999999)", "LPAD: 999999999 is longer than 131072"), ("YEAR(Name)", "YEAR: \"  Acme Corp  \" is not a date"),
    ]

    @Test(arguments: failures)
    func failsForTheRecord(_ formula: String, _ message: String) throws {
        do {
            let value = try Self.value(formula)
            Issue.record("\(formula) gave \(value)")
        } catch let error as FormulaEvaluationError {
            #expect(error.message.contains(message), "\(formula): \(error.message)")
        }
    }

    @Test func resultsBecomeFieldValues() throws {
        #expect(try Self.value("DATE(2024,1,5)").json == .string("2024-01-05"))
        #expect(try Self.value("DATETIMEVALUE(\"2024-01-31 10:00:00\")").json == .string("2024-01-31T10:00:00.000+0000"))
        #expect(try Self.value("3 * 2").json == .integer(6))
        #expect(try Self.value("1 / 4").json == .double(0.25))
        #expect(try Self.value("Nothing").json == .null)
    }
}
