import Testing

@testable import SOQL

@Suite struct ParseErrorTests {
    @Test func unexpectedKeywordInSelectList() throws {
        let error = try #require(queryError("SELECT Id, Name, From Account"))
        #expect(error.errorCode == .malformedQuery)
        #expect(error.row == 1)
        #expect(error.column == 18)
        #expect(error.detail == "unexpected token: 'From'")
        #expect(
            error.message
                == "\nSELECT Id, Name, From Account\n                 ^\nERROR at Row:1:Column:18\nunexpected token: 'From'")
    }

    @Test func salesforceTrailingCommaExample() throws {
        let query = "SELECT Id, LastModifiedById, LastModifiedDate, From Account "
        let error = try #require(queryError(query))
        #expect(error.column == 48)
        #expect(error.message.hasSuffix("\nERROR at Row:1:Column:48\nunexpected token: 'From'"))
        #expect(error.message.hasPrefix("\n\(query)\n\(String(repeating: " ", count: 47))^\n"))
    }

    @Test func salesforceShortExample() throws {
        let error = try #require(queryError("invalid SELECT Id FROM Account"))
        #expect(error.detail == "unexpected token: 'invalid'")
        #expect(error.errorCode.rawValue == "MALFORMED_QUERY")
        #expect((error.row, error.column) == (1, 1))
    }

    @Test func endOfInput() throws {
        let error = try #require(queryError("SELECT Id FROM"))
        #expect((error.row, error.column) == (1, 15))
        #expect(error.message == "\nSELECT Id FROM\n              ^\nERROR at Row:1:Column:15\nunexpected token: <EOF>")
    }

    @Test func errorOnALaterRowShowsThatRow() throws {
        let error = try #require(queryError("SELECT Id\nFROM Account\nWHERE Name = 'x' AND"))
        #expect((error.row, error.column) == (3, 21))
        #expect(
            error.message
                == "\nWHERE Name = 'x' AND\n                    ^\nERROR at Row:3:Column:21\nunexpected token: <EOF>")
    }

    @Test func mixingAndWithOrNeedsParentheses() throws {
        let error = try #require(queryError("SELECT Id FROM Account WHERE A = 1 AND B = 2 OR C = 3"))
        #expect((error.row, error.column) == (1, 46))
        #expect(error.detail == "unexpected token: 'OR'")
        let reversed = try #require(conditionError("A = 1 OR B = 2 AND C = 3"))
        #expect((reversed.column, reversed.detail) == (16, "unexpected token: 'AND'"))
    }

    @Test func lexicalErrors() throws {
        let escape = try #require(queryError(#"SELECT Id FROM Account WHERE Name = 'a\qb'"#))
        #expect(escape.column == 37)
        #expect(escape.detail == #"Invalid string literal 'a\qb'. Illegal character sequence '\q' in string literal."#)
        let unterminated = try #require(queryError("SELECT Id FROM Account WHERE Name = 'abc"))
        #expect(unterminated.column == 41)
        #expect(unterminated.detail == "mismatched character '<EOF>' expecting '''")
        let doubleQuoted = try #require(queryError(#"SELECT Id FROM Account WHERE Name = "x""#))
        #expect(doubleQuoted.column == 37)
        #expect(doubleQuoted.detail == #"no viable alternative at character '"'"#)
        let badUnicode = try #require(conditionError(#"Name = '\u12'"#))
        #expect(badUnicode.detail == #"Invalid string literal '\u12'. Illegal character sequence '\u' in string literal."#)
        let loneSurrogate = try #require(conditionError(#"Name = '\ud83d'"#))
        #expect(loneSurrogate.column == 8)
    }

    @Test func unsupportedClausesAreRejected() throws {
        let negativeLimit = try #require(queryError("SELECT Id FROM Account LIMIT -1"))
        #expect(negativeLimit.column == 30)
        #expect(negativeLimit.detail == "unexpected token: '-1'")
        #expect(queryError("SELECT Id FROM Account FOR EVER")?.detail == "unexpected token: 'EVER'")
        #expect(queryError("SELECT Id FROM Account ALL ROWS")?.detail == "unexpected token: 'ALL'")
        #expect(queryError("SELECT Name FROM Account HAVING COUNT(Id) > 1")?.detail == "unexpected token: 'HAVING'", "HAVING needs GROUP BY")
        #expect(queryError("SELECT Name FROM Account WHERE COUNT(Id) > 1")?.detail == "unexpected token: '('", "aggregates only in HAVING")
        #expect(queryError("SELECT Name FROM Account GROUP BY Name HAVING COUNT(Id) IN (1, 2)")?.detail == "unexpected token: 'IN'")
        #expect(queryError("SELECT Id FROM Account;")?.detail == "no viable alternative at character ';'")
        #expect(queryError("SELECT FORMAT(Amount) FROM Opportunity")?.detail == "unexpected token: 'FORMAT'")
        #expect(queryError("SELECT Id FROM Account WHERE Id IN 'a'")?.detail == "unexpected token: ''a''")
        #expect(queryError("SELECT Id FROM Account WHERE Tags__c INCLUDES (SELECT Id FROM Tag__c)")?.detail == "unexpected token: 'SELECT'")
        #expect(queryError("SELECT Id FROM Account WHERE Name NOT LIKE 'a'")?.detail == "unexpected token: 'LIKE'")
        #expect(queryError("SELECT Id FROM Account WHERE Id IN ()")?.detail == "unexpected token: ')'")
        #expect(queryError("")?.detail == "unexpected token: <EOF>")
    }

    @Test func conditionErrorsPointIntoTheCondition() throws {
        let error = try #require(conditionError("Name = 'x' AND"))
        #expect(error.message == "\nName = 'x' AND\n              ^\nERROR at Row:1:Column:15\nunexpected token: <EOF>")
        #expect(conditionError("Name = 'x') ")?.detail == "unexpected token: ')'")
    }

    @Test func deepNestingIsRefused() throws {
        let deep = String(repeating: "(", count: 40) + "A = 1" + String(repeating: ")", count: 40)
        let error = try #require(conditionError(deep))
        #expect(error.detail == "nesting deeper than 32 levels")
        #expect(error.column == 33)
        let allowed = String(repeating: "(", count: 30) + "A = 1" + String(repeating: ")", count: 30)
        #expect(try SOQL.parseCondition(allowed) == (try comparison("A", .equal, .integer(1))))
    }

    @Test func invalidFieldMessageMatchesSalesforce() throws {
        let text = "SELECT SetupOwnerId FROM npe5__Affiliation__c"
        let query = try SOQL.parseQuery(text)
        guard case .field(let field) = query.select[0], let position = field.position else {
            throw TestFailure("no field position")
        }
        let error = SOQLError.noSuchColumn(field.fieldName, onEntity: query.from.name, at: position, in: text)
        #expect(error.errorCode == .invalidField)
        #expect((error.row, error.column) == (1, 8))
        #expect(
            error.message
                == "\nSELECT SetupOwnerId FROM npe5__Affiliation__c\n       ^\nERROR at Row:1:Column:8\nNo such column 'SetupOwnerId' on entity 'npe5__Affiliation__c'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names."
        )
    }

    @Test func invalidTypeMessageMatchesSalesforce() throws {
        let text = "select count() from XYZZY"
        let query = try SOQL.parseQuery(text)
        let position = try #require(query.from.position)
        let error = SOQLError.unsupportedObjectType(query.from.name, at: position, in: text)
        #expect(error.errorCode.rawValue == "INVALID_TYPE")
        #expect(
            error.message
                == "\nselect count() from XYZZY\n                    ^\nERROR at Row:1:Column:21\nsObject type 'XYZZY' is not supported. If you are attempting to use a custom object, be sure to append the '__c' after the entity name. Please reference your WSDL or the describe call for the appropriate names."
        )
        #expect(error.description.hasPrefix("INVALID_TYPE: \nselect count()"))
    }
}
