import JSON
import Testing

@testable import SOQL

/// 2024-05-15T10:30:00Z, a Wednesday in the second quarter.
let fixedNow: Int64 = 1_715_769_000_000

/// Whether `condition` (SOQL text) holds for `fields`.
func holds(_ condition: String, _ fields: JSONValue, now: Int64 = fixedNow) throws -> Bool {
    try SOQLEvaluator(nowMilliseconds: now).matches(try SOQL.parseCondition(condition), record: record(fields))
}

@Suite struct EvaluatorTests {
    @Test func fixedNowIsWhatItSays() throws {
        #expect(try dateTime("2024-05-15T10:30:00Z").epochMilliseconds == fixedNow)
    }

    @Test func stringEqualityIgnoresCase() throws {
        let account: JSONValue = ["Name": "Acme Corp", "Industry": nil]
        #expect(try holds("Name = 'acme corp'", account))
        #expect(try holds("Name = 'ACME CORP'", account))
        #expect(try !holds("Name = 'Acme'", account))
        #expect(try holds("Name != 'Acme'", account))
        #expect(try !holds("Name != 'ACME corp'", account))
        #expect(try holds("Name <> 'x'", account))
        #expect(try holds("name = 'Acme Corp'", account))
    }

    @Test func nullComparisons() throws {
        let account: JSONValue = ["Name": "Acme", "Industry": nil, "Amount": nil]
        #expect(try holds("Industry = null", account))
        #expect(try holds("Missing__c = null", account))
        #expect(try !holds("Name = null", account))
        #expect(try holds("Name != null", account))
        #expect(try !holds("Industry != null", account))
        #expect(try holds("Industry != 'Tech'", account))
        #expect(try !holds("Industry = 'Tech'", account))
        for op in ["<", "<=", ">", ">="] {
            #expect(try !holds("Amount \(op) 5", account))
            #expect(try !holds("Name \(op) null", account))
        }
        #expect(try !holds("Industry LIKE '%'", account))
    }

    @Test func numbersCompareNumerically() throws {
        let deal: JSONValue = ["Amount": 1500.5, "Count": 12, "Text": "42", "Big": 9_007_199_254_740_993]
        #expect(try holds("Amount > 1000", deal))
        #expect(try holds("Amount = 1500.50", deal))
        #expect(try holds("Amount >= 1500.5 AND Amount <= 1500.5", deal))
        #expect(try !holds("Amount < 1500", deal))
        #expect(try holds("Count = 12.0", deal))
        #expect(try holds("Count > 9", deal))
        #expect(try holds("Count < 100", deal))
        #expect(try holds("Text = 42", deal))
        #expect(try holds("Text > 9", deal))
        #expect(try holds("Big = 9007199254740993", deal))
        #expect(try !holds("Big = 9007199254740992", deal))
        #expect(try holds("Amount != 'abc'", deal))
    }

    @Test func stringOrdering() throws {
        let account: JSONValue = ["Name": "mango"]
        #expect(try holds("Name > 'Apple'", account))
        #expect(try holds("Name < 'ZEBRA'", account))
        #expect(try holds("Name >= 'MANGO'", account))
        #expect(try !holds("Name > 'MANGO'", account))
    }

    @Test func booleans() throws {
        let opportunity: JSONValue = ["IsWon": true, "IsClosed": false, "Flag": "TRUE"]
        #expect(try holds("IsWon = true", opportunity))
        #expect(try holds("IsClosed = FALSE", opportunity))
        #expect(try !holds("IsClosed = true", opportunity))
        #expect(try holds("IsClosed != true", opportunity))
        #expect(try holds("Flag = true", opportunity))
    }

    @Test func like() throws {
        let contact: JSONValue = ["Name": "Anna_Smith 100%", "Email": "anna@example.com"]
        #expect(try holds("Name LIKE 'anna%'", contact))
        #expect(try holds("Name LIKE '%SMITH%'", contact))
        #expect(try holds("Name LIKE 'A_na%'", contact))
        #expect(try !holds("Name LIKE 'A_a%'", contact))
        #expect(try holds("Name LIKE '%100\\%'", contact))
        #expect(try !holds("Name LIKE '%10\\%'", contact))
        #expect(try holds("Name LIKE 'Anna\\_%'", contact))
        #expect(try !holds("Email LIKE 'anna\\_%'", contact))
        #expect(try holds("Email LIKE '%@%.com'", contact))
        #expect(try !holds("Email LIKE '%@%.org'", contact))
        #expect(try holds("Email LIKE 'anna@example.com'", contact))
        #expect(try !holds("Email LIKE 'anna@example.co'", contact))
        #expect(try holds("Email LIKE '%'", contact))
        #expect(try holds("NOT Email LIKE 'bob%'", contact))
    }

    /// ASCII text is matched by bytes, other text by characters: the answers are the same.
    @Test func likeOverTextBeyondASCII() throws {
        let record: JSONValue = ["Name": "Zoë Ångström", "City": "Line\r\nBreak", "Code": "ab"]
        #expect(try holds("Name LIKE 'zoë%'", record))
        #expect(try holds("Name LIKE 'ZO_ _ngstr_m'", record), "_ takes one character, whatever its bytes")
        #expect(try holds("Name LIKE '%ÅNGSTRÖM'", record))
        #expect(try !holds("Name LIKE 'zoe%'", record))
        #expect(try holds("City LIKE 'Line_Break'", record), "a CR LF pair is one character")
        #expect(try !holds("City LIKE 'Line__Break'", record))
        #expect(try holds("Code LIKE 'AB'", record))
        #expect(try !holds("Code LIKE 'äb'", record))
    }

    @Test func inAndNotIn() throws {
        let account: JSONValue = ["Id": "001000000000001AAA", "Rating": nil, "Employees": 50]
        #expect(try holds("Id IN ('001000000000001aaa', '001000000000002AAA')", account))
        #expect(try !holds("Id IN ('001000000000002AAA')", account))
        #expect(try holds("Id NOT IN ('001000000000002AAA')", account))
        #expect(try !holds("Id NOT IN ('001000000000001AAA')", account))
        #expect(try holds("Rating IN ('Hot', null)", account))
        #expect(try holds("Rating NOT IN ('Hot')", account))
        #expect(try holds("Employees IN (10, 50)", account))
    }

    @Test func includesAndExcludes() throws {
        let product: JSONValue = ["Colors__c": "Red;Blue; Green", "Empty__c": nil]
        #expect(try holds("Colors__c INCLUDES ('red')", product))
        #expect(try holds("Colors__c INCLUDES ('green')", product))
        #expect(try holds("Colors__c INCLUDES ('yellow', 'blue')", product))
        #expect(try holds("Colors__c INCLUDES ('red;blue')", product))
        #expect(try !holds("Colors__c INCLUDES ('red;yellow')", product))
        #expect(try !holds("Colors__c INCLUDES ('Re')", product))
        #expect(try holds("Colors__c EXCLUDES ('yellow')", product))
        #expect(try !holds("Colors__c EXCLUDES ('blue')", product))
        #expect(try holds("Colors__c EXCLUDES ('red;yellow')", product))
        #expect(try !holds("Empty__c INCLUDES ('red')", product))
        #expect(try holds("Empty__c EXCLUDES ('red')", product))
    }

    @Test func parentFieldsThroughNestedObjects() throws {
        let contact: JSONValue = [
            "LastName": "Smith", "Account": ["Name": "Acme", "Owner": ["Name": "Olga"]], "ReportsTo": nil,
        ]
        #expect(try holds("Account.Name = 'acme'", contact))
        #expect(try holds("Account.Owner.Name = 'Olga'", contact))
        #expect(try holds("account.owner.name = 'olga'", contact))
        #expect(try holds("ReportsTo.Name = null", contact))
        #expect(try !holds("ReportsTo.Name != null", contact))
        #expect(try holds("LastName.Length = null", contact))
    }

    @Test func logicalOperators() throws {
        let account: JSONValue = ["Name": "Acme", "Rating": "Hot", "Industry": "Tech"]
        #expect(try holds("Name = 'Acme' AND Rating = 'Hot'", account))
        #expect(try !holds("Name = 'Acme' AND Rating = 'Cold'", account))
        #expect(try holds("Name = 'Other' OR Rating = 'Hot'", account))
        #expect(try !holds("Name = 'Other' OR Rating = 'Cold'", account))
        #expect(try holds("NOT Name = 'Other'", account))
        #expect(try holds("(Name = 'Other' OR Rating = 'Hot') AND NOT (Industry = 'Retail' OR Industry = null)", account))
        #expect(try !holds("NOT (Name = 'Acme' AND Rating = 'Hot')", account))
    }

    @Test func datesAndDatetimesCompareAsInstants() throws {
        let record: JSONValue = [
            "CreatedDate": "2024-01-31T12:00:00.000+0000", "Zulu": "2024-01-31T12:00:00.000Z",
            "Offset": "2024-01-31T17:30:00+05:30", "CloseDate": "2024-01-31", "Garbage": "not a date",
        ]
        for field in ["CreatedDate", "Zulu", "Offset"] {
            #expect(try holds("\(field) = 2024-01-31T12:00:00Z", record))
            #expect(try holds("\(field) = 2024-01-31T12:00:00.000Z", record))
            #expect(try holds("\(field) = 2024-01-31T04:00:00-08:00", record))
            #expect(try holds("\(field) > 2024-01-31T11:59:59Z", record))
            #expect(try !holds("\(field) > 2024-01-31T12:00:00Z", record))
            #expect(try holds("\(field) >= 2024-01-31T12:00:00Z", record))
            #expect(try holds("\(field) <= 2024-01-31T12:00:00Z", record))
            #expect(try !holds("\(field) < 2024-01-31T12:00:00Z", record))
            #expect(try holds("\(field) < 2024-01-31T12:00:00.001Z", record))
            #expect(try holds("\(field) != 2024-01-31T12:00:01Z", record))
        }
        #expect(try holds("CloseDate = 2024-01-31", record))
        #expect(try holds("CloseDate > 2024-01-30", record))
        #expect(try holds("CloseDate <= 2024-01-31", record))
        #expect(try !holds("CloseDate < 2024-01-31", record))
        #expect(try !holds("CloseDate >= 2024-02-01", record))
        #expect(try holds("CreatedDate = 2024-01-31", record))
        #expect(try holds("CreatedDate < 2024-02-01", record))
        #expect(try !holds("Garbage = 2024-01-31", record))
        #expect(try holds("Garbage != 2024-01-31", record))
        #expect(try !holds("Garbage < 2024-01-31", record))
    }

    /// Each relative literal at `fixedNow`, with the first and last day it covers.
    static let dateLiteralCases: [(String, String, String)] = [
        ("TODAY", "2024-05-15", "2024-05-15"),
        ("YESTERDAY", "2024-05-14", "2024-05-14"),
        ("TOMORROW", "2024-05-16", "2024-05-16"),
        ("LAST_WEEK", "2024-05-05", "2024-05-11"),
        ("THIS_WEEK", "2024-05-12", "2024-05-18"),
        ("NEXT_WEEK", "2024-05-19", "2024-05-25"),
        ("LAST_MONTH", "2024-04-01", "2024-04-30"),
        ("THIS_MONTH", "2024-05-01", "2024-05-31"),
        ("NEXT_MONTH", "2024-06-01", "2024-06-30"),
        ("LAST_90_DAYS", "2024-02-15", "2024-05-15"),
        ("NEXT_90_DAYS", "2024-05-16", "2024-08-13"),
        ("LAST_QUARTER", "2024-01-01", "2024-03-31"),
        ("THIS_QUARTER", "2024-04-01", "2024-06-30"),
        ("NEXT_QUARTER", "2024-07-01", "2024-09-30"),
        ("LAST_YEAR", "2023-01-01", "2023-12-31"),
        ("THIS_YEAR", "2024-01-01", "2024-12-31"),
        ("NEXT_YEAR", "2025-01-01", "2025-12-31"),
        ("LAST_N_DAYS:7", "2024-05-08", "2024-05-15"),
        ("NEXT_N_DAYS:7", "2024-05-16", "2024-05-22"),
        ("N_DAYS_AGO:3", "2024-05-12", "2024-05-12"),
        ("LAST_N_WEEKS:2", "2024-04-28", "2024-05-11"),
        ("NEXT_N_WEEKS:2", "2024-05-19", "2024-06-01"),
        ("LAST_N_MONTHS:2", "2024-03-01", "2024-04-30"),
        ("NEXT_N_MONTHS:2", "2024-06-01", "2024-07-31"),
        ("LAST_N_YEARS:2", "2022-01-01", "2023-12-31"),
        ("NEXT_N_YEARS:1", "2025-01-01", "2025-12-31"),
    ]

    @Test(arguments: dateLiteralCases)
    func dateLiteralCoversItsDays(_ literal: String, _ first: String, _ last: String) throws {
        let firstDay = try date(first)
        let lastDay = try date(last)
        let dayMilliseconds: Int64 = 86_400_000
        let start = firstDay.dayNumber * dayMilliseconds
        let end = (lastDay.dayNumber + 1) * dayMilliseconds
        func stamp(_ milliseconds: Int64) throws -> JSONValue {
            guard let value = SOQLDateTime(epochMilliseconds: milliseconds) else { throw TestFailure("out of range") }
            return ["D": .string(value.description.replacingZWithOffset())]
        }
        #expect(try holds("D = \(literal)", try stamp(start)))
        #expect(try holds("D = \(literal)", try stamp(end - 1)))
        #expect(try !holds("D = \(literal)", try stamp(start - 1)))
        #expect(try !holds("D = \(literal)", try stamp(end)))
        #expect(try holds("D != \(literal)", try stamp(end)))
        #expect(try holds("D < \(literal)", try stamp(start - 1)))
        #expect(try !holds("D < \(literal)", try stamp(start)))
        #expect(try holds("D <= \(literal)", try stamp(end - 1)))
        #expect(try !holds("D <= \(literal)", try stamp(end)))
        #expect(try holds("D > \(literal)", try stamp(end)))
        #expect(try !holds("D > \(literal)", try stamp(end - 1)))
        #expect(try holds("D >= \(literal)", try stamp(start)))
        #expect(try !holds("D >= \(literal)", try stamp(start - 1)))
        #expect(try holds("D = \(literal)", ["D": .string(first)]))
        #expect(try holds("D = \(literal)", ["D": .string(last)]))
        let dayBefore = try #require(SOQLDateTime(epochMilliseconds: start - 1)).date
        #expect(try !holds("D = \(literal)", ["D": .string(dayBefore.description)]))
    }

    @Test func relativeLiteralsFollowNow() throws {
        let newYearsEve = try dateTime("2024-12-31T23:59:59Z").epochMilliseconds
        #expect(try holds("D = TOMORROW", ["D": "2025-01-01"], now: newYearsEve))
        #expect(try holds("D = NEXT_QUARTER", ["D": "2025-03-31"], now: newYearsEve))
        #expect(try holds("D = LAST_N_MONTHS:12", ["D": "2024-01-01"], now: newYearsEve))
        #expect(try holds("D = THIS_WEEK", ["D": "2024-12-29"], now: newYearsEve))
        #expect(try !holds("D = THIS_WEEK", ["D": "2024-12-28"], now: newYearsEve))
        #expect(try holds("D = LAST_N_DAYS:1000000000", ["D": "1970-01-01"]))
    }

    @Test func semiJoinsAskTheResolver() throws {
        let condition = try SOQL.parseCondition(
            "Id IN (SELECT AccountId FROM Contact WHERE LastName = 'Smith') AND Id NOT IN (SELECT AccountId FROM Case)")
        let evaluator = SOQLEvaluator(nowMilliseconds: fixedNow, subqueryValues: { subquery in
            switch subquery.from.name {
            case "Contact": return ["001A", "001B", nil]
            default: return ["001B"]
            }
        })
        #expect(try evaluator.matches(condition, record: record(["Id": "001a"])))
        #expect(try !evaluator.matches(condition, record: record(["Id": "001B"])))
        #expect(try !evaluator.matches(condition, record: record(["Id": "001C"])))
        let bare = SOQLEvaluator(nowMilliseconds: fixedNow)
        #expect(throws: SOQLEvaluationError.self) { try bare.matches(condition, record: record(["Id": "001A"])) }
    }

    @Test func customFieldResolver() throws {
        let evaluator = SOQLEvaluator(
            nowMilliseconds: fixedNow, fieldValue: { record, path in record["fields"]?.value(atPath: path.description) })
        let entry = record(["fields": ["Name": "Acme"], "Name": "Wrong"])
        #expect(try evaluator.matches(try SOQL.parseCondition("Name = 'Acme'"), record: entry))
    }
}

extension String {
    /// `2024-01-31T12:00:00.000Z` as Salesforce returns it: `2024-01-31T12:00:00.000+0000`.
    fileprivate func replacingZWithOffset() -> String {
        hasSuffix("Z") ? String(dropLast()) + "+0000" : self
    }
}
