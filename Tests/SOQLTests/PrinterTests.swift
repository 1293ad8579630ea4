import Testing

@testable import SOQL

@Suite struct PrinterTests {
    static let roundTripQueries = [
        "SELECT Id, Name FROM Account",
        "select id, account.owner.name from contact c where c.Account.Name like 'Acme%' order by c.Name limit 5",
        "SELECT Name, (SELECT LastName, Email FROM Contacts WHERE Email != null ORDER BY LastName DESC NULLS LAST LIMIT 3) FROM Account",
        "SELECT COUNT() FROM Account WHERE Industry = 'Tech'",
        "SELECT COUNT(Id), MIN(Amount) low, MAX(Amount), SUM(Amount) total, AVG(Amount) mean, COUNT_DISTINCT(OwnerId) FROM Opportunity",
        "SELECT Id FROM Account WHERE (Name = 'A' OR Name = 'B') AND (Rating = 'Hot' OR NOT Industry = 'Tech')",
        "SELECT Id FROM Account WHERE NOT (Name = 'A' AND Rating = 'Hot')",
        "SELECT Id FROM Account WHERE NOT Name = 'A' AND Rating <> 'Hot'",
        "SELECT Id FROM Account WHERE ((A = 1 AND B = 2) AND C = 3) OR D = 4",
        "SELECT Id FROM Account WHERE Id IN (SELECT AccountId FROM Contact WHERE LastName = 'O\\'Brien') AND Id NOT IN (SELECT AccountId FROM Case)",
        "SELECT Id FROM Account WHERE Name IN ('a', 'b\\\\c', 'd\\'e', 'tab\\there', 'nl\\n', '\\u00e9', '50\\%')",
        "SELECT Id FROM Product2 WHERE Colors__c INCLUDES ('red;blue', 'green') AND Sizes__c EXCLUDES ('XL')",
        "SELECT Id FROM Opportunity WHERE Amount >= 1000.50 AND Amount < -2 AND Probability > 0.000001 AND Count__c <= 12345678901234",
        "SELECT Id FROM Opportunity WHERE IsWon = true AND IsClosed = FALSE AND Description = null",
        "SELECT Id FROM Opportunity WHERE CloseDate = 2024-01-31 AND CreatedDate > 2024-01-31T12:00:00Z AND LastModifiedDate < 2024-01-31T12:00:00.5+05:30 AND SystemModstamp >= 2024-01-31T12:00:00-0800",
        "SELECT Id FROM Opportunity WHERE CloseDate = TODAY OR CloseDate = LAST_N_DAYS:30 OR CloseDate > NEXT_N_YEARS:2 OR CloseDate IN (THIS_QUARTER, N_DAYS_AGO:3)",
        "SELECT Id FROM Account ORDER BY Name ASC NULLS FIRST, CreatedDate DESC LIMIT 10 OFFSET 20",
        "SELECT Id FROM Order ORDER BY OrderNumber",
    ]

    @Test(arguments: roundTripQueries)
    func parsePrintParseIsIdentity(_ text: String) throws {
        let parsed = try SOQL.parseQuery(text)
        let printed = parsed.description
        #expect(try SOQL.parseQuery(printed) == parsed)
        #expect(try SOQL.parseQuery(printed).description == printed)
    }

    @Test func canonicalText() throws {
        let query = try SOQL.parseQuery(
            "select id, (select lastname from contacts) from account a where a.name like 'x%' and not (rating = 'Hot' or rating = null) order by name desc nulls last limit 5 offset 1")
        #expect(
            query.description
                == "SELECT id, (SELECT lastname FROM contacts) FROM account a WHERE name LIKE 'x%' AND (NOT (rating = 'Hot' OR rating = null)) ORDER BY name DESC NULLS LAST LIMIT 5 OFFSET 1"
        )
    }

    @Test func datetimesPrintInSalesforceForm() throws {
        let condition = try SOQL.parseCondition(
            "A = 2024-01-31T12:00:00Z AND B = 2024-01-31T12:00:00.5+05:30 AND C = 2024-01-31T12:00:00-0800 AND D = 2024-01-31T12:00:00+00:00")
        #expect(
            condition.description
                == "A = 2024-01-31T12:00:00.000Z AND B = 2024-01-31T12:00:00.500+05:30 AND C = 2024-01-31T12:00:00.000-08:00 AND D = 2024-01-31T12:00:00.000Z"
        )
        #expect(SOQLDateTime(epochMilliseconds: 1_706_702_400_123)?.description == "2024-01-31T12:00:00.123Z")
        #expect(SOQLDateTime(epochMilliseconds: -1)?.description == "1969-12-31T23:59:59.999Z")
    }

    @Test func decimalsPrintWithoutExponent() throws {
        #expect(SOQLValue.decimal(12.5).description == "12.5")
        #expect(SOQLValue.decimal(100).description == "100.0")
        #expect(SOQLValue.decimal(1e-6).description == "0.000001")
        #expect(SOQLValue.decimal(-2.5e-7).description == "-0.00000025")
        #expect(SOQLValue.decimal(1.5e20).description == "150000000000000000000.0")
        #expect(SOQLValue.decimal(1.2345e17).description == "123450000000000000.0")
        #expect(SOQLValue.decimal(.infinity).description == "null")
        for value in [1e-6, -2.5e-7, 1.5e20, 1.2345e17, 0.1, 123.456] {
            #expect(try SOQL.parseCondition("A = \(SOQLValue.decimal(value))") == (try comparison("A", .equal, .decimal(value))))
        }
    }

    @Test func stringsAreQuotedAndEscaped() throws {
        let nasty = "O'Brien \\ \"q\" \n\r\t\u{08}\u{0C} '\u{301} é"
        let printed = SOQLValue.string(nasty).description
        #expect(printed == #"'O\'Brien \\ \"q\" \n\r\t\b\f \'"# + "\u{301} é'")
        #expect(try SOQL.parseCondition("Name = \(printed)") == (try comparison("Name", .equal, .string(nasty))))
    }
}

@Suite struct BuilderTests {
    @Test func queryFromParts() throws {
        var query = try SOQLQuery(selecting: ["Id", "Name", "Account.Name"], from: "Contact")
        query.orderBy = [SOQLOrdering(try path("Name"), .descending)]
        query.limit = 200
        #expect(query.description == "SELECT Id, Name, Account.Name FROM Contact ORDER BY Name DESC LIMIT 200")
        #expect(try SOQL.parseQuery(query.description) == query)
    }

    @Test func inListEscapesQuotesAndBackslashes() throws {
        let condition = try SOQLCondition.isIn("Id", ["001'; DELETE", "a\\b", "plain"])
        #expect(condition.description == #"Id IN ('001\'; DELETE', 'a\\b', 'plain')"#)
        #expect(try SOQL.parseCondition(condition.description) == condition)
        let negated = try SOQLCondition.isIn("Name", ["x"], negated: true)
        #expect(negated.description == "Name NOT IN ('x')")
    }

    @Test func emptyInListThrowsWhatSalesforceWould() throws {
        do {
            _ = try SOQLCondition.isIn("Id", [])
            Issue.record("expected an error")
        } catch {
            #expect(error.errorCode == .malformedQuery)
            #expect(error.message == "\nId IN ()\n       ^\nERROR at Row:1:Column:8\nunexpected token: ')'")
        }
    }

    @Test func addFilterParenthesisesAnExistingOr() throws {
        var query = try SOQL.parseQuery("SELECT Id FROM Account WHERE Name = 'A' OR Name = 'B'")
        let since = try #require(SOQLDateTime(epochMilliseconds: 1_706_702_400_000))
        query.addFilter(try .compare("LastModifiedDate", .greaterThan, .dateTime(since)))
        #expect(
            query.description
                == "SELECT Id FROM Account WHERE (Name = 'A' OR Name = 'B') AND LastModifiedDate > 2024-01-31T12:00:00.000Z")
        #expect(try SOQL.parseQuery(query.description) == query)
    }

    @Test func addFilterExtendsAnAndAndFillsAnEmptyWhere() throws {
        let base = try SOQLQuery(selecting: ["Id"], from: "Account")
        let first = base.addingFilter(try .compare("Rating", .equal, .string("Hot")))
        #expect(first.description == "SELECT Id FROM Account WHERE Rating = 'Hot'")
        let second = first.addingFilter(try .compare("Industry", .notEqual, .null))
        let third = second.addingFilter(try SOQL.parseCondition("Type = 'A' OR Type = 'B'"))
        #expect(
            third.description
                == "SELECT Id FROM Account WHERE Rating = 'Hot' AND Industry != null AND (Type = 'A' OR Type = 'B')")
        #expect(try SOQLCondition.compare("Tags__c", .includes, .string("a;b")).description == "Tags__c INCLUDES ('a;b')")
    }

    @Test func parentSoqlFilterIsAddedThroughTheAST() throws {
        var query = try SOQL.parseQuery("SELECT Id, Name, (SELECT Id, LastName FROM Contacts) FROM Account")
        query.addFilter(try SOQL.parseCondition("Industry = 'Tech' OR Rating = 'Hot'"))
        #expect(
            query.description
                == "SELECT Id, Name, (SELECT Id, LastName FROM Contacts) FROM Account WHERE Industry = 'Tech' OR Rating = 'Hot'")
    }

    @Test func namesAreCheckedNotPasted() {
        for bad in ["Name FROM User", "Name,Id", "", "From", "1abc", "a.", "Name'"] {
            #expect(throws: SOQLError.self) { try SOQLFieldPath(bad) }
        }
        #expect(throws: SOQLError.self) { try SOQLObjectReference("Account.Owner") }
        #expect(throws: SOQLError.self) { try SOQLObjectReference("Account", alias: "WHERE") }
        #expect(throws: SOQLError.self) { try SOQLQuery(selecting: ["Id"], from: "Account WHERE Id != null") }
        #expect(throws: SOQLError.self) { try SOQLAggregate(.count, try path("Id"), alias: "x y") }
        #expect((try? SOQLFieldPath("Account.Owner.Name"))?.components == ["Account", "Owner", "Name"])
        #expect((try? SOQLObjectReference("Account", alias: "acc"))?.description == "Account acc")
    }
}
