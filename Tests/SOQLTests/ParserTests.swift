import Testing

@testable import SOQL

@Suite struct ParserTests {
    @Test func simpleSelect() throws {
        let query = try SOQL.parseQuery("SELECT Id, Name FROM Account")
        #expect(query.select == [.field(try path("Id")), .field(try path("Name"))])
        #expect(query.from.name == "Account")
        #expect(query.from.alias == nil)
        #expect(query.whereCondition == nil)
        #expect(query.orderBy.isEmpty)
        #expect(query.limit == nil)
        #expect(query.offset == nil)
    }

    /// `WITH SECURITY_ENFORCED` (or USER_MODE / SYSTEM_MODE) and `FOR VIEW / REFERENCE / UPDATE`
    /// are read where an org reads them and printed back.
    @Test func withAndForClauses() throws {
        let query = try SOQL.parseQuery("select Id from Account where Name != null with security_enforced order by Name limit 5 for view")
        #expect(query.withClause == "SECURITY_ENFORCED")
        #expect(query.forClause == "VIEW")
        #expect(query.description == "SELECT Id FROM Account WHERE Name != null WITH SECURITY_ENFORCED ORDER BY Name LIMIT 5 FOR VIEW")
        #expect(try SOQL.parseQuery(query.description) == query)
        #expect(try SOQL.parseQuery("SELECT Id FROM Contact FOR UPDATE").forClause == "UPDATE")
        #expect(try SOQL.parseQuery("SELECT Id FROM Contact WITH USER_MODE").withClause == "USER_MODE")
        #expect(throws: SOQLError.self) { try SOQL.parseQuery("SELECT Id FROM Contact FOR EVER") }
        #expect(throws: SOQLError.self) { try SOQL.parseQuery("SELECT Id FROM Contact WITH NOTHING") }
    }

    /// `toLabel(field)` is kept as such (a real org translates it) and printed back.
    @Test func toLabel() throws {
        let query = try SOQL.parseQuery("select Name, tolabel(a.Industry) from Account a")
        #expect(query.select[1] == .label(try SOQLFieldPath("Industry")))
        #expect(query.description == "SELECT Name, toLabel(Industry) FROM Account a")
        #expect(try SOQL.parseQuery(query.description) == query)
        #expect(throws: SOQLError.self) { try SOQL.parseQuery("SELECT toLabel() FROM Account") }
    }

    @Test func groupBy() throws {
        let query = try SOQL.parseQuery("select Industry, count(Id) n from Account a where a.Name != null group by a.Industry order by Industry limit 3")
        #expect(query.groupBy.map(\.description) == ["Industry"], "the FROM alias is removed")
        #expect(query.description == "SELECT Industry, COUNT(Id) n FROM Account a WHERE Name != null GROUP BY Industry ORDER BY Industry LIMIT 3")
        #expect(try SOQL.parseQuery(query.description) == query)
    }

    @Test func having() throws {
        let query = try SOQL.parseQuery("select a.Industry, count(Id) from Account a group by Industry having count(Id) > 1 and (sum(a.AnnualRevenue) >= 100 or Industry = 'Energy') order by Industry")
        #expect(query.description == "SELECT Industry, COUNT(Id) FROM Account a GROUP BY Industry HAVING COUNT(Id) > 1 AND (SUM(AnnualRevenue) >= 100 OR Industry = 'Energy') ORDER BY Industry")
        #expect(try SOQL.parseQuery(query.description) == query)
        #expect(try SOQL.parseQuery("SELECT Name FROM Account GROUP BY Name HAVING COUNT() > 1").description
                == "SELECT Name FROM Account GROUP BY Name HAVING COUNT(Id) > 1")
    }

    @Test func keywordsAreCaseInsensitive() throws {
        let lower = try SOQL.parseQuery("select Id from Account where Name like 'a%' order by Name desc nulls last limit 5")
        let upper = try SOQL.parseQuery("SELECT Id FROM Account WHERE Name LIKE 'a%' ORDER BY Name DESC NULLS LAST LIMIT 5")
        #expect(lower == upper)
        #expect(lower.limit == 5)
    }

    @Test func childToParentPaths() throws {
        let query = try SOQL.parseQuery("SELECT Id, Account.Owner.Name FROM Contact")
        guard case .field(let field) = query.select[1] else { throw TestFailure("not a field") }
        #expect(field.components == ["Account", "Owner", "Name"])
        #expect(field.fieldName == "Name")
        #expect(Array(field.relationships) == ["Account", "Owner"])
        #expect(field.position == SOQLSourcePosition(row: 1, column: 12))
    }

    @Test func parentToChildSubquery() throws {
        let query = try SOQL.parseQuery(
            "SELECT Name, (SELECT LastName FROM Contacts WHERE Email != null ORDER BY LastName LIMIT 10) FROM Account")
        let subquery = SOQLQuery(
            select: [.field(try path("LastName"))], from: try SOQLObjectReference("Contacts"),
            where: try comparison("Email", .notEqual, .null), orderBy: [SOQLOrdering(try path("LastName"))],
            limit: 10)
        #expect(query.select == [.field(try path("Name")), .subquery(subquery)])
        guard case .subquery(let parsed) = query.select[1] else { throw TestFailure("not a subquery") }
        #expect(parsed.from.position == SOQLSourcePosition(row: 1, column: 36))
    }

    @Test func countAndAggregates() throws {
        let count = try SOQL.parseQuery("SELECT COUNT() FROM Account")
        #expect(count.select == [.count])
        let aggregates = try SOQL.parseQuery(
            "SELECT COUNT(Id), MIN(Amount) smallest, max(Amount), SUM(Amount) total, AVG(Amount), COUNT_DISTINCT(StageName) FROM Opportunity")
        #expect(
            aggregates.select == [
                .aggregate(try SOQLAggregate(.count, try path("Id"))),
                .aggregate(try SOQLAggregate(.min, try path("Amount"), alias: "smallest")),
                .aggregate(try SOQLAggregate(.max, try path("Amount"))),
                .aggregate(try SOQLAggregate(.sum, try path("Amount"), alias: "total")),
                .aggregate(try SOQLAggregate(.avg, try path("Amount"))),
                .aggregate(try SOQLAggregate(.countDistinct, try path("StageName"))),
            ])
    }

    @Test func fromAliasIsRemovedFromPaths() throws {
        let query = try SOQL.parseQuery(
            "SELECT a.Name, a.Owner.Name FROM Account a WHERE a.Name = 'x' ORDER BY a.Name")
        #expect(query.from.alias == "a")
        #expect(query.select == [.field(try path("Name")), .field(try path("Owner.Name"))])
        #expect(query.whereCondition == (try comparison("Name", .equal, .string("x"))))
        #expect(query.orderBy == [SOQLOrdering(try path("Name"))])
        #expect(query.description == "SELECT Name, Owner.Name FROM Account a WHERE Name = 'x' ORDER BY Name")
    }

    @Test func andBindsAChainOfOneConnective() throws {
        let condition = try SOQL.parseCondition("A = 1 AND B = 2 AND C = 3")
        #expect(
            condition
                == .and([
                    try comparison("A", .equal, .integer(1)), try comparison("B", .equal, .integer(2)),
                    try comparison("C", .equal, .integer(3)),
                ]))
    }

    @Test func parenthesesGroupAndOr() throws {
        let condition = try SOQL.parseCondition("(A = 1 OR B = 2) AND (C = 3 OR NOT D = 4)")
        #expect(
            condition
                == .and([
                    .or([try comparison("A", .equal, .integer(1)), try comparison("B", .equal, .integer(2))]),
                    .or([
                        try comparison("C", .equal, .integer(3)), .not(try comparison("D", .equal, .integer(4))),
                    ]),
                ]))
    }

    @Test func notAppliesToTheNextComparisonOrGroup() throws {
        #expect(
            try SOQL.parseCondition("NOT A = 1 AND B = 2")
                == .and([.not(try comparison("A", .equal, .integer(1))), try comparison("B", .equal, .integer(2))]))
        #expect(
            try SOQL.parseCondition("NOT (A = 1 OR B = 2)")
                == .not(.or([try comparison("A", .equal, .integer(1)), try comparison("B", .equal, .integer(2))])))
    }

    @Test func operators() throws {
        let expected: [(String, SOQLComparisonOperator)] = [
            ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .lessThan), ("<=", .lessThanOrEqual),
            (">", .greaterThan), (">=", .greaterThanOrEqual), ("LIKE", .like), ("like", .like),
        ]
        for (text, op) in expected {
            #expect(try SOQL.parseCondition("Amount \(text) 5") == (try comparison("Amount", op, .integer(5))))
        }
        #expect(
            try SOQL.parseCondition("Id IN ('a', 'b')")
                == (try comparison("Id", .in, .list([.string("a"), .string("b")]))))
        #expect(try SOQL.parseCondition("Id not in ('a')") == (try comparison("Id", .notIn, .list([.string("a")]))))
        #expect(
            try SOQL.parseCondition("Colors__c INCLUDES ('red;blue', 'green')")
                == (try comparison("Colors__c", .includes, .list([.string("red;blue"), .string("green")]))))
        #expect(
            try SOQL.parseCondition("Colors__c EXCLUDES ('red')")
                == (try comparison("Colors__c", .excludes, .list([.string("red")]))))
    }

    @Test func semiJoinAndAntiJoin() throws {
        let condition = try SOQL.parseCondition(
            "Id IN (SELECT AccountId FROM Contact WHERE LastName = 'Smith') AND Id NOT IN (SELECT AccountId FROM Opportunity)")
        let contacts = SOQLQuery(
            select: [.field(try path("AccountId"))], from: try SOQLObjectReference("Contact"),
            where: try comparison("LastName", .equal, .string("Smith")))
        let opportunities = SOQLQuery(
            select: [.field(try path("AccountId"))], from: try SOQLObjectReference("Opportunity"))
        #expect(
            condition
                == .and([
                    try comparison("Id", .in, .subquery(contacts)), try comparison("Id", .notIn, .subquery(opportunities)),
                ]))
    }

    @Test func stringEscapes() throws {
        let condition = try SOQL.parseCondition(#"Name = 'it\'s \"q\" \\ \n\r\t\b\f \u00e9\ud83d\ude00 \% \_'"#)
        #expect(
            condition == (try comparison("Name", .equal, .string("it's \"q\" \\ \n\r\t\u{08}\u{0C} é😀 \\% \\_"))))
    }

    @Test func numberAndBooleanAndNullLiterals() throws {
        #expect(try SOQL.parseCondition("A = 42") == (try comparison("A", .equal, .integer(42))))
        #expect(try SOQL.parseCondition("A = -7") == (try comparison("A", .equal, .integer(-7))))
        #expect(try SOQL.parseCondition("A = 12.50") == (try comparison("A", .equal, .decimal(12.5))))
        #expect(try SOQL.parseCondition("A = -0.25") == (try comparison("A", .equal, .decimal(-0.25))))
        #expect(try SOQL.parseCondition("A = TRUE") == (try comparison("A", .equal, .boolean(true))))
        #expect(try SOQL.parseCondition("A = false") == (try comparison("A", .equal, .boolean(false))))
        #expect(try SOQL.parseCondition("A = NULL") == (try comparison("A", .equal, .null)))
    }

    @Test func dateAndDateTimeLiterals() throws {
        #expect(
            try SOQL.parseCondition("CloseDate = 2024-01-31")
                == (try comparison("CloseDate", .equal, .date(try date("2024-01-31")))))
        let forms: [(String, Int, Int)] = [
            ("2024-01-31T12:00:00Z", 0, 0), ("2024-01-31T12:00:00.123Z", 123, 0),
            ("2024-01-31T12:00:00+05:30", 0, 330), ("2024-01-31T12:00:00.5-0800", 500, -480),
        ]
        for (text, millisecond, offset) in forms {
            guard case .comparison(let parsed) = try SOQL.parseCondition("CreatedDate > \(text)"),
                case .value(.dateTime(let value)) = parsed.operand
            else { throw TestFailure("no datetime in \(text)") }
            #expect(value.date == (try date("2024-01-31")))
            #expect([value.hour, value.minute, value.second] == [12, 0, 0])
            #expect(value.millisecond == millisecond)
            #expect(value.utcOffsetMinutes == offset)
        }
        let utc = try dateTime("2024-01-31T12:00:00Z")
        #expect(utc.epochMilliseconds == 1_706_702_400_000)
        #expect(try dateTime("2024-01-31T17:30:00+05:30").epochMilliseconds == 1_706_702_400_000)
    }

    @Test func invalidCalendarValuesAreRejected() {
        #expect(queryError("SELECT Id FROM Account WHERE CloseDate = 2023-02-29")?.detail == "unexpected token: '2023-02-29'")
        #expect(conditionError("D = 2024-02-29") == nil)
        #expect(conditionError("D = 2024-01-31T24:00:00Z")?.detail == "unexpected token: '2024-01-31T24:00:00Z'")
        #expect(conditionError("D = 2024-01-31T12:00:00")?.detail == "unexpected token: '2024-01-31T12:00:00'")
    }

    @Test func relativeDateLiterals() throws {
        let fixed: [(String, SOQLDateLiteral)] = [
            ("TODAY", .today), ("YESTERDAY", .yesterday), ("TOMORROW", .tomorrow), ("LAST_WEEK", .lastWeek),
            ("THIS_WEEK", .thisWeek), ("NEXT_WEEK", .nextWeek), ("LAST_MONTH", .lastMonth),
            ("THIS_MONTH", .thisMonth), ("NEXT_MONTH", .nextMonth), ("LAST_90_DAYS", .last90Days),
            ("NEXT_90_DAYS", .next90Days), ("THIS_QUARTER", .thisQuarter), ("LAST_QUARTER", .lastQuarter),
            ("NEXT_QUARTER", .nextQuarter), ("THIS_YEAR", .thisYear), ("LAST_YEAR", .lastYear),
            ("NEXT_YEAR", .nextYear), ("LAST_N_DAYS:30", .lastNDays(30)), ("NEXT_N_DAYS:5", .nextNDays(5)),
            ("N_DAYS_AGO:3", .nDaysAgo(3)), ("LAST_N_WEEKS:2", .lastNWeeks(2)), ("NEXT_N_WEEKS:4", .nextNWeeks(4)),
            ("LAST_N_MONTHS:6", .lastNMonths(6)), ("NEXT_N_MONTHS:1", .nextNMonths(1)),
            ("LAST_N_YEARS:3", .lastNYears(3)), ("NEXT_N_YEARS:2", .nextNYears(2)), ("today", .today),
            ("last_n_days:7", .lastNDays(7)),
        ]
        for (text, literal) in fixed {
            #expect(
                try SOQL.parseCondition("CreatedDate >= \(text)")
                    == (try comparison("CreatedDate", .greaterThanOrEqual, .dateLiteral(literal))))
        }
        #expect(conditionError("D = LAST_N_DAYS")?.detail == "unexpected token: <EOF>")
        #expect(conditionError("D = LAST_N_DAYS:-1")?.detail == "unexpected token: '-1'")
        #expect(conditionError("D = TODAY:1")?.detail == "unexpected token: 'TODAY'")
        #expect(conditionError("D = SOMEDAY")?.detail == "unexpected token: 'SOMEDAY'")
    }

    @Test func orderByLimitOffset() throws {
        let query = try SOQL.parseQuery(
            "SELECT Id FROM Account ORDER BY Name, CreatedDate DESC, Industry ASC NULLS LAST, Rating DESC NULLS FIRST LIMIT 100 OFFSET 20")
        #expect(
            query.orderBy == [
                SOQLOrdering(try path("Name")), SOQLOrdering(try path("CreatedDate"), .descending),
                SOQLOrdering(try path("Industry"), .ascending, nulls: .last),
                SOQLOrdering(try path("Rating"), .descending, nulls: .first),
            ])
        #expect(query.orderBy.map(\.nullsFirst) == [true, false, false, true])
        #expect(query.limit == 100)
        #expect(query.offset == 20)
    }

    @Test func objectNamedLikeAKeyword() throws {
        let query = try SOQL.parseQuery("SELECT Id FROM Order ORDER BY OrderNumber")
        #expect(query.from.name == "Order")
        #expect(query.from.alias == nil)
        #expect(query.orderBy == [SOQLOrdering(try path("OrderNumber"))])
    }

    @Test func multiLineQueryPositions() throws {
        let query = try SOQL.parseQuery("SELECT Id,\n  Name\nFROM Account\nWHERE  Name = 'x'")
        guard case .field(let name) = query.select[1], case .comparison(let filter)? = query.whereCondition else {
            throw TestFailure("unexpected shape")
        }
        #expect(name.position == SOQLSourcePosition(row: 2, column: 3))
        #expect(query.from.position == SOQLSourcePosition(row: 3, column: 6))
        #expect(filter.field.position == SOQLSourcePosition(row: 4, column: 8))
    }
}
