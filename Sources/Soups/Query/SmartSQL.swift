import GRDB
import JSON

/// Translates Smart SQL — SQL over `{soup}` and `{soup:path}` placeholders — into SQLite SQL, as
/// SmartStore does: `{soup}` is the soup's table, `{soup:path}` its index column, or
/// `json_extract` for json1 and unindexed paths; `_soup`, `_soupEntryId`, `_soupLastModifiedDate`
/// and `_soupCreatedDate` are the system columns. Braces inside quoted strings are left alone.
/// Only SELECT statements are accepted.
struct SmartSQL {
    /// Names the soups a statement refers to.
    static func soupNames(in sql: String) throws -> [String] {
        var names: [String] = []
        _ = try scan(sql) { placeholder in
            let name = placeholder.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            if !names.contains(name) { names.append(name) }
            return ""
        }
        return names
    }

    /// Replaces every placeholder using the soups' tables.
    static func translate(_ sql: String, tables: [String: SoupTable]) throws -> String {
        let trimmed = sql.drop { $0.isWhitespace }
        guard trimmed.prefix(6).lowercased() == "select" else {
            throw SoupStoreError.invalidSmartSQL("only SELECT statements are allowed")
        }
        return try scan(sql) { placeholder in
            let parts = placeholder.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let table = tables[parts[0]] else { throw SoupStoreError.unknownSoup(parts[0]) }
            if parts.count == 1 { return table.tableName }
            guard !parts[1].isEmpty else { throw SoupStoreError.invalidSmartSQL("empty path in {\(placeholder)}") }
            return table.expression(forPath: parts[1])
        }
    }

    private static func scan(_ sql: String, replace: (String) throws -> String) throws -> String {
        var output = ""
        var quote: Character?
        var index = sql.startIndex
        while index < sql.endIndex {
            let character = sql[index]
            if let open = quote {
                output.append(character)
                if character == open { quote = nil }
                index = sql.index(after: index)
                continue
            }
            if character == "'" || character == "\"" {
                quote = character
                output.append(character)
                index = sql.index(after: index)
                continue
            }
            if character == "{" {
                guard let close = sql[index...].firstIndex(of: "}") else {
                    throw SoupStoreError.invalidSmartSQL("unclosed '{' in \(sql)")
                }
                let placeholder = String(sql[sql.index(after: index)..<close])
                guard !placeholder.isEmpty, !placeholder.contains("{") else {
                    throw SoupStoreError.invalidSmartSQL("bad placeholder {\(placeholder)}")
                }
                output += try replace(placeholder)
                index = sql.index(after: close)
                continue
            }
            output.append(character)
            index = sql.index(after: index)
        }
        if quote != nil { throw SoupStoreError.invalidSmartSQL("unterminated string in \(sql)") }
        return output
    }
}

extension SoupStore {
    /// Runs a Smart SQL query (e.g. `SELECT {Accounts:Name}, COUNT(*) FROM {Accounts} GROUP BY
    /// {Accounts:Name}`) and returns its rows. A `_soup` column comes back as the entry object.
    public func smartQuery(_ sql: String, arguments: [JSONValue] = [], pageSize: Int = 1000, page: Int = 0) async throws -> [[JSONValue]] {
        try await pool.read { db in
            var tables: [String: SoupTable] = [:]
            for name in try SmartSQL.soupNames(in: sql) { tables[name] = try SoupTable.load(db, soupName: name) }
            let translated = try SmartSQL.translate(sql, tables: tables)
            let paged = "SELECT * FROM (\(translated)) LIMIT \(pageSize) OFFSET \(page * pageSize)"
            let statement: Statement
            do {
                statement = try db.makeStatement(sql: paged)
            } catch let error as DatabaseError {
                throw SoupStoreError.invalidSmartSQL(error.message ?? "\(error)")
            }
            let rows = try Row.fetchAll(statement, arguments: StatementArguments(arguments.map(EntryWriter.json1Value)))
            return rows.map { row in
                row.map { name, value -> JSONValue in
                    switch value.storage {
                    case .null: return .null
                    case .int64(let number): return .integer(number)
                    case .double(let number): return .double(number)
                    case .string(let text):
                        if name == "soup" || name.hasPrefix("soup:"), let object = try? JSONParser.parse(text), object.objectValue != nil {
                            return object
                        }
                        return .string(text)
                    case .blob(let data): return .string(data.base64EncodedString())
                    }
                }
            }
        }
    }
}
