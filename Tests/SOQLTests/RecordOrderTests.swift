import JSON
import Testing

@testable import SOQL

@Suite struct RecordOrderTests {
    /// The `Id`s of `records` sorted by the ORDER BY of `orderBy` (SOQL text after `ORDER BY`).
    func sortedIds(_ records: [JSONValue], _ orderBy: String) throws -> [String] {
        let query = try SOQL.parseQuery("SELECT Id FROM Account ORDER BY \(orderBy)")
        return records.map(record).sorted(by: SOQLRecordOrder(query.orderBy).areInIncreasingOrder)
            .compactMap { $0["Id"]?.stringValue }
    }

    static let accounts: [JSONValue] = [
        ["Id": "1", "Name": "banana", "Rating": "Hot", "Employees": 50],
        ["Id": "2", "Name": "Apple", "Rating": nil, "Employees": 7],
        ["Id": "3", "Name": "cherry", "Rating": "Cold", "Employees": 50],
        ["Id": "4", "Name": nil, "Rating": "Hot", "Employees": 1000],
    ]

    @Test func nullsFirstWhenAscending() throws {
        #expect(try sortedIds(Self.accounts, "Name") == ["4", "2", "1", "3"])
        #expect(try sortedIds(Self.accounts, "Name ASC NULLS LAST") == ["2", "1", "3", "4"])
    }

    @Test func nullsLastWhenDescending() throws {
        #expect(try sortedIds(Self.accounts, "Name DESC") == ["3", "1", "2", "4"])
        #expect(try sortedIds(Self.accounts, "Name DESC NULLS FIRST") == ["4", "3", "1", "2"])
    }

    @Test func numbersSortNumerically() throws {
        #expect(try sortedIds(Self.accounts, "Employees") == ["2", "1", "3", "4"])
        #expect(try sortedIds(Self.accounts, "Employees DESC, Name") == ["4", "1", "3", "2"])
    }

    @Test func multipleKeys() throws {
        #expect(try sortedIds(Self.accounts, "Rating DESC, Name DESC") == ["1", "4", "3", "2"])
        #expect(try sortedIds(Self.accounts, "Employees, Rating NULLS LAST") == ["2", "3", "1", "4"])
    }

    @Test func datetimesSortAsInstants() throws {
        let records: [JSONValue] = [
            ["Id": "a", "When": "2024-01-31T12:00:00.000+0000"],
            ["Id": "b", "When": "2024-01-31T11:00:00.000-02:00"],
            ["Id": "c", "When": "2024-01-31T12:30:00.000Z"],
            ["Id": "d", "When": "2024-01-30"],
        ]
        #expect(try sortedIds(records, "When") == ["d", "a", "c", "b"])
    }

    @Test func parentFieldsAndBooleans() throws {
        let records: [JSONValue] = [
            ["Id": "x", "Account": ["Name": "Zeta"], "IsWon": true],
            ["Id": "y", "Account": ["Name": "alpha"], "IsWon": false],
            ["Id": "z", "Account": nil, "IsWon": true],
        ]
        #expect(try sortedIds(records, "Account.Name") == ["z", "y", "x"])
        #expect(try sortedIds(records, "IsWon, Id DESC") == ["y", "z", "x"])
    }
}
