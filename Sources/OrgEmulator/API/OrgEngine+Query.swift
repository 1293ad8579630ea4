import Foundation
import GRDB
import JSON
import SOQL

/// `/query` and `/queryAll`: SOQL over the stored records, paged with `nextRecordsUrl`, with
/// child-to-parent paths, parent-to-child subqueries (paged past 200 children), semi-joins,
/// `COUNT()` and aggregates.
extension OrgEngine {
    static let childPageSize = 200

    func query(_ request: EmulatorRequest, version: String, parts: [String], in outer: Database?) throws(APIError) -> EmulatorResponse {
        let includeDeleted = parts[0] == "queryAll"
        if parts.count == 2 {
            return .json(200, try nextPage(locator: parts[1], in: outer))
        }
        guard let text = request.query["q"], !text.isEmpty else {
            throw APIError(400, "MALFORMED_QUERY", "A query string has to be specified")
        }
        var batchSize = 2000
        if let options = request.headers["sforce-query-options"], let range = options.range(of: "batchSize=") {
            let digits = options[range.upperBound...].prefix { $0.isNumber }
            if let value = Int(digits) { batchSize = min(2000, max(200, value)) }
        }
        return .json(200, try runQuery(text, includeDeleted: includeDeleted, batchSize: batchSize, version: version, in: outer))
    }

    /// Parses, checks and runs a query; the first page of results.
    func runQuery(_ text: String, includeDeleted: Bool, batchSize: Int, version: String, in outer: Database?) throws(APIError) -> JSONValue {
        let plan: QueryPlan
        do {
            plan = try QueryPlan(query: try SOQL.parseQuery(text), text: text, schema: schema)
        } catch {
            throw APIError(400, error.errorCode.rawValue, error.message)
        }
        if !plan.query.groupBy.isEmpty { return try groupedResult(plan, includeDeleted: includeDeleted, in: outer) }
        // The selected fields are read when a page is shaped: matching reads only what it filters and orders on.
        let (records, views) = try matchingRecords(plan, includeDeleted: includeDeleted, parentIds: nil, selecting: false, in: outer)
        if plan.query.select.contains(where: { if case .count = $0 { return true }; return false }) {
            return ["totalSize": .integer(Int64(records.count)), "done": true, "records": []]
        }
        if plan.query.select.contains(where: { if case .aggregate = $0 { return true }; return false }) {
            return ["totalSize": 1, "done": true, "records": [aggregateRow(plan, views: views)]]
        }
        var cursor = QueryCursor(plan: plan, ids: records.map(\.id), position: 0, batchSize: batchSize,
                                 totalSize: records.count, version: version)
        return try page(&cursor, in: outer)
    }

    /// The records a plan selects, filtered, ordered, offset and limited, with their evaluation
    /// views (fields plus nested parents). `parentIds` narrows a child query to those parents.
    /// Without `selecting`, the views hold only what the plan filters, orders and aggregates on,
    /// not the fields it selects.
    func matchingRecords(_ plan: QueryPlan, includeDeleted: Bool, parentIds: (field: String, ids: [String])?, selecting: Bool = true,
                         in outer: Database?) throws(APIError)
        -> ([StoredRecord], [JSONObject])
    {
        do {
            // Only the fields the plan reads are parsed: callers shape the records they keep from
            // their ids.
            let keeping = Self.fieldsRead(by: plan, alsoReading: parentIds?.field, selecting: selecting)
            return try read(in: outer) { db in
                let records = try parentIds.map { try RecordStore.fetchChildren(db, type: plan.object.name, field: $0.field, parentIds: $0.ids, keeping: keeping) }
                    ?? RecordStore.fetchAll(db, type: plan.object.name, includeDeleted: includeDeleted, keeping: keeping)
                var cache: [String: StoredRecord?] = [:]
                let chains = Self.relationshipChains(plan, selecting: selecting)
                var pairs: [(StoredRecord, JSONObject)] = []
                let semiJoins = try semiJoinValues(plan.query.whereCondition, db: db)
                let evaluator = SOQLEvaluator(nowMilliseconds: clock.now(), subqueryValues: { query in semiJoins[query] ?? [] })
                for record in records {
                    let view = try attachParents(to: record, object: plan.object, chains: chains, db: db, cache: &cache, version: nil)
                    if let condition = plan.query.whereCondition, try !evaluator.matches(condition, record: view) {
                        continue
                    }
                    pairs.append((record, view))
                }
                if !plan.query.orderBy.isEmpty {
                    let order = SOQLRecordOrder(plan.query.orderBy)
                    pairs.sort { order.areInIncreasingOrder($0.1, $1.1) }
                }
                if let offset = plan.query.offset { pairs = Array(pairs.dropFirst(offset)) }
                if let limit = plan.query.limit, parentIds == nil { pairs = Array(pairs.prefix(limit)) }
                return (pairs.map(\.0), pairs.map(\.1))
            }
        } catch let error as APIError {
            throw error
        } catch let error as SOQLError {
            throw APIError(400, error.errorCode.rawValue, error.message)
        } catch {
            throw APIError(400, "MALFORMED_QUERY", "\(error)")
        }
    }

    /// Runs every semi-join / anti-join subquery of a condition once.
    func semiJoinValues(_ condition: SOQLCondition?, db: Database) throws -> [SOQLQuery: [JSONValue]] {
        var values: [SOQLQuery: [JSONValue]] = [:]
        func walk(_ condition: SOQLCondition) throws {
            switch condition {
            case .and(let members), .or(let members): for member in members { try walk(member) }
            case .not(let inner): try walk(inner)
            case .comparison(let comparison):
                guard case .subquery(let subquery) = comparison.operand, values[subquery] == nil else { return }
                let plan = try QueryPlan(query: subquery, text: subquery.description, schema: schema)
                let (_, views) = try matchingRecords(plan, includeDeleted: false, parentIds: nil, in: db)
                guard case .field(let path)? = subquery.select.first else { return }
                values[subquery] = views.map { SOQLEvaluator.nestedValue(in: $0, at: path) ?? .null }
            }
        }
        if let condition { try walk(condition) }
        return values
    }

    /// A page of the cursor's records, shaped as the API returns them.
    func page(_ cursor: inout QueryCursor, in outer: Database?) throws(APIError) -> JSONValue {
        let start = cursor.position
        let end = min(start + cursor.batchSize, cursor.end)
        let records: [JSONValue]
        if let children = cursor.childRecords {
            records = Array(children[(start - cursor.first)..<(end - cursor.first)])
        } else {
            records = try shape(ids: Array(cursor.ids[(start - cursor.first)..<(end - cursor.first)]), plan: cursor.plan, version: cursor.version,
                                in: outer)
        }
        cursor.position = end
        var result = JSONObject()
        result["totalSize"] = .integer(Int64(cursor.totalSize))
        let done = end >= cursor.end
        result["done"] = .bool(done)
        if !done && cursor.id == nil {
            cursor.id = cursors.newId(now: clock.now())
        }
        if let id = cursor.id {
            // A served last page is all a finished cursor keeps: a 200,000-record query no longer
            // holds its ids for 15 minutes once read to the end.
            if done {
                // From the last page's locator on, whatever page was asked for.
                let lastPage = max(0, (cursor.end - 1) / cursor.batchSize * cursor.batchSize)
                if min(start, lastPage) > cursor.first { cursor.drop(before: min(start, lastPage)) }
            }
            cursor.lastUsed = clock.now()
            cursors.keep(cursor, id: id)
            if !done { result["nextRecordsUrl"] = .string("/services/data/v\(cursor.version)/query/\(id)-\(end)") }
        }
        result["records"] = .array(records)
        return .object(result)
    }

    /// The page a locator names. As in an org, one cursor serves every page of a query, and a
    /// page can be fetched again (a client retrying a lost answer) until the cursor expires.
    func nextPage(locator: String, in outer: Database?) throws(APIError) -> JSONValue {
        let invalid = APIError(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        guard let dash = locator.lastIndex(of: "-"), let position = Int(locator[locator.index(after: dash)...]),
              var cursor = cursors.cursor(String(locator[..<dash])), position > 0, position >= cursor.first,
              position < cursor.end else { throw invalid }
        cursor.position = position
        return try page(&cursor, in: outer)
    }

    /// Records in the API's shape: `attributes`, the selected fields in order, nested parents
    /// (`null` when the lookup is empty) and child subquery results (`null` when there are none).
    func shape(ids: [String], plan: QueryPlan, version: String, in outer: Database?) throws(APIError) -> [JSONValue] {
        var shaped: [JSONValue] = []
        let records: [StoredRecord]
        do {
            // Only the fields the plan reads are parsed (wide records, narrow select lists).
            let keeping = Self.fieldsRead(by: plan, alsoReading: nil)
            records = try read(in: outer) { db in try RecordStore.fetch(db, ids: ids, keeping: keeping) }
        } catch {
            throw APIError.unexpected(error)
        }
        var children: [String: [(String, JSONValue)]] = [:]
        for subquery in plan.subqueries {
            let (childRecords, _) = try matchingRecords(subquery.plan, includeDeleted: false, parentIds: (subquery.relationship.field, ids), selecting: false,
                                                          in: outer)
            let childShaped = try shape(ids: childRecords.map(\.id), plan: subquery.plan, version: version, in: outer)
            var byParent: [String: [JSONValue]] = [:]
            for (record, value) in zip(childRecords, childShaped) {
                if let parent = record.fields[subquery.relationship.field]?.stringValue { byParent[parent, default: []].append(value) }
            }
            for id in ids {
                var list = byParent[id] ?? []
                if let limit = subquery.plan.query.limit { list = Array(list.prefix(limit)) }
                guard !list.isEmpty else { children[id, default: []].append((subquery.name, .null)); continue }
                var cursor = QueryCursor(plan: subquery.plan, ids: [], position: 0, batchSize: Self.childPageSize,
                                         totalSize: list.count, version: version, childRecords: list)
                children[id, default: []].append((subquery.name, try page(&cursor, in: outer)))
            }
        }
        // Every record's parents in one read (a read per record cost a transaction each).
        let chains = Self.relationshipChains(plan)
        let views: [JSONObject]
        do {
            views = try read(in: outer) { db in
                var cache: [String: StoredRecord?] = [:]
                return try records.map { record in try attachParents(to: record, object: plan.object, chains: chains, db: db, cache: &cache, version: version) }
            }
        } catch {
            throw APIError.unexpected(error)
        }
        for (record, view) in zip(records, views) {
            var output = JSONObject()
            output["attributes"] = view["attributes"]
            // Picklist labels are their values in the emulator, so `toLabel(F)` reads F.
            for path in plan.query.select.compactMap(\.fieldPath) {
                place(path.components[...], from: view, into: &output)
            }
            for (name, value) in children[record.id] ?? [] { output[name] = value }
            shaped.append(.object(output))
        }
        return shaped
    }

    /// Copies the value at `path` from a view into an output record, creating nested parent
    /// objects with their own `attributes`. Keys are spelled as the schema spells them, however
    /// the query does (an empty field is not in its view: the view's type names its schema).
    func place(_ path: ArraySlice<String>, from view: JSONObject, into output: inout JSONObject) {
        guard let first = path.first else { return }
        let key = view.contains(first) ? first
            : view["attributes"]?["type"]?.stringValue.flatMap { schema.object($0)?.field(first)?.name }
            ?? view.keys.first { $0.lowercased() == first.lowercased() } ?? first
        if path.count == 1 {
            output[key] = view[key] ?? .null
            return
        }
        guard case .object(let parentView)? = view[key] else {
            output[key] = .null
            return
        }
        var nested = output[key]?.objectValue ?? JSONObject()
        if nested["attributes"] == nil { nested["attributes"] = parentView["attributes"] ?? .null }
        place(path.dropFirst(), from: parentView, into: &nested)
        output[key] = .object(nested)
    }

    /// Every chain of relationship names a plan's fields go through (`["Account", "Parent"]`).
    static func relationshipChains(_ plan: QueryPlan, selecting: Bool = true) -> [[String]] {
        var chains: [[String]] = []
        for path in referencedPaths(plan, selecting: selecting) {
            let chain = Array(path.components.dropLast())
            if !chain.isEmpty && !chains.contains(chain) { chains.append(chain) }
        }
        return chains
    }

    /// Every field path a plan reads outside its subqueries: selected (unless not `selecting`),
    /// aggregated, ordered, grouped and filtered on.
    static func referencedPaths(_ plan: QueryPlan, selecting: Bool = true) -> [SOQLFieldPath] {
        var paths: [SOQLFieldPath] = []
        for item in plan.query.select {
            if selecting, let path = item.fieldPath { paths.append(path) }
            if case .aggregate(let aggregate) = item { paths.append(aggregate.field) }
        }
        paths += plan.query.orderBy.map(\.field) + plan.query.groupBy
        func collect(_ condition: SOQLCondition) {
            switch condition {
            case .and(let members), .or(let members): members.forEach(collect)
            case .not(let inner): collect(inner)
            case .comparison(let comparison): paths.append(comparison.field)
            }
        }
        if let condition = plan.query.whereCondition { collect(condition) }
        if let having = plan.query.having { collect(having) }
        return paths
    }

    /// The stored fields a plan reads from each record of its object — each path's field, or the
    /// reference field of the relationship it starts with, and `Id` — so that only those are
    /// parsed while every record is matched; `nil` (read them all) for what it cannot name.
    static func fieldsRead(by plan: QueryPlan, alsoReading extra: String?, selecting: Bool = true) -> Set<String>? {
        guard plan.query.groupBy.isEmpty, plan.query.having == nil else { return nil }
        var names: Set<String> = ["Id"]
        if let extra { names.insert(extra) }
        for path in referencedPaths(plan, selecting: selecting) {
            guard let first = path.components.first else { return nil }
            if path.components.count == 1 {
                guard let field = plan.object.field(first) else { return nil }
                names.insert(field.name)
            } else {
                guard let reference = plan.object.relationship(first) else { return nil }
                names.insert(reference.name)
            }
        }
        return names
    }

    /// The record's fields with each needed parent nested under its relationship name; with a
    /// `version`, each level also has the `attributes` the API returns for it (a query's filter
    /// and order read no attributes).
    func attachParents(to record: StoredRecord, object: ObjectSchema, chains: [[String]], db: Database,
                       cache: inout [String: StoredRecord?], version: String?) throws -> JSONObject {
        var view = record.fields
        if let version {
            view["attributes"] = .object(JSONObject(uniqueKeysWithValues: [
                ("type", .string(object.name)), ("url", .string("/services/data/v\(version)/sobjects/\(object.name)/\(record.id)"))]))
        }
        if chains.isEmpty { return view }
        let groups = Dictionary(grouping: chains.filter { !$0.isEmpty }) { $0[0].lowercased() }
        for (_, group) in groups {
            guard let reference = object.relationship(group[0][0]), let parentObject = reference.referenceTo.flatMap({ schema.object($0) }),
                  let relationshipName = reference.relationshipName else { continue }
            guard let parentId = record.fields[reference.name]?.stringValue else {
                view[relationshipName] = .null
                continue
            }
            if cache[parentId] == nil { cache[parentId] = try RecordStore.fetch(db, id: parentId) }
            guard let parent = cache[parentId] ?? nil else {
                view[relationshipName] = .null
                continue
            }
            let rest = group.map { Array($0.dropFirst()) }.filter { !$0.isEmpty }
            // A polymorphic lookup's parent is of its own object, not of the lookup's first target.
            view[relationshipName] = .object(try attachParents(to: parent, object: schema.object(parent.type) ?? parentObject, chains: rest, db: db,
                                                               cache: &cache, version: version))
        }
        return view
    }

    /// `GROUP BY`: one AggregateResult row per distinct combination of the grouped values (in
    /// order of first appearance, or by `ORDER BY` on grouped fields), with those values under
    /// their field names; `OFFSET` and `LIMIT` count rows.
    func groupedResult(_ plan: QueryPlan, includeDeleted: Bool, in outer: Database?) throws(APIError) -> JSONValue {
        var unordered = plan.query
        unordered.orderBy = []
        unordered.limit = nil
        unordered.offset = nil
        let (_, views) = try matchingRecords(QueryPlan(copying: plan, query: unordered), includeDeleted: includeDeleted, parentIds: nil, in: outer)
        var groups: [[JSONValue]: [JSONObject]] = [:]
        var keys: [[JSONValue]] = []
        for view in views {
            let key = plan.query.groupBy.map { path -> JSONValue in
                let value = SOQLEvaluator.nestedValue(in: view, at: path) ?? .null
                return value.stringValue.map { .string($0.lowercased()) } ?? value
            }
            if groups[key] == nil { keys.append(key) }
            groups[key, default: []].append(view)
        }
        // HAVING compares aggregates: each becomes a field of the group's view, holding its value.
        var havingAggregates: [(function: SOQLAggregate.Function, path: SOQLFieldPath)] = []
        let having = plan.query.having.map { Self.havingOverViews($0, aggregates: &havingAggregates) }
        let evaluator = SOQLEvaluator(nowMilliseconds: clock.now())
        // Each row with one of its records, which holds the grouped values ORDER BY sorts on.
        var rows: [(JSONObject, JSONValue)] = []
        for key in keys {
            let members = groups[key]!
            if let having {
                var view = members[0]
                for (index, aggregate) in havingAggregates.enumerated() {
                    view["HavingAggregate\(index)"] = Self.aggregateValue(aggregate.function, of: aggregate.path, over: members)
                }
                do {
                    guard try evaluator.matches(having, record: view) else { continue }
                } catch {
                    throw APIError(400, "MALFORMED_QUERY", "\(error)")
                }
            }
            var grouped = JSONObject()
            for path in plan.query.groupBy { grouped[path.fieldName] = SOQLEvaluator.nestedValue(in: members[0], at: path) ?? .null }
            rows.append((members[0], aggregateRow(plan, views: members, grouped: grouped)))
        }
        if !plan.query.orderBy.isEmpty {
            let order = SOQLRecordOrder(plan.query.orderBy)
            rows.sort { order.areInIncreasingOrder($0.0, $1.0) }
        }
        var result = rows.map(\.1)
        if let offset = plan.query.offset { result = Array(result.dropFirst(offset)) }
        if let limit = plan.query.limit { result = Array(result.prefix(limit)) }
        return ["totalSize": .integer(Int64(result.count)), "done": true, "records": .array(result)]
    }

    /// One AggregateResult row: the grouped values, then `expr0`, `expr1`… or the aliases.
    func aggregateRow(_ plan: QueryPlan, views: [JSONObject], grouped: JSONObject = [:]) -> JSONValue {
        var row = JSONObject()
        row["attributes"] = ["type": "AggregateResult"]
        for (name, value) in grouped { row[name] = value }
        var unnamed = 0
        for item in plan.query.select {
            guard case .aggregate(let aggregate) = item else { continue }
            let name = aggregate.alias ?? "expr\(unnamed)"
            if aggregate.alias == nil { unnamed += 1 }
            row[name] = Self.aggregateValue(aggregate.function, of: aggregate.field, over: views)
        }
        return .object(row)
    }

    /// One aggregate of a field over a group's records.
    static func aggregateValue(_ function: SOQLAggregate.Function, of path: SOQLFieldPath, over views: [JSONObject]) -> JSONValue {
        let values = views.map { SOQLEvaluator.nestedValue(in: $0, at: path) ?? .null }.filter { !$0.isNull }
        let numbers = values.compactMap(\.doubleValue)
        switch function {
        case .count: return .integer(Int64(values.count))
        case .countDistinct: return .integer(Int64(Set(values.map { $0.stringValue?.lowercased() ?? $0.jsonString }).count))
        case .sum: return numbers.isEmpty ? .null : .double(numbers.reduce(0, +))
        case .avg: return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        case .min, .max:
            let order = SOQLRecordOrder([SOQLOrdering(path, function == .min ? .ascending : .descending)])
            let sorted = views.filter { !(SOQLEvaluator.nestedValue(in: $0, at: path) ?? .null).isNull }.sorted(by: order.areInIncreasingOrder)
            return sorted.first.flatMap { SOQLEvaluator.nestedValue(in: $0, at: path) } ?? .null
        }
    }

    /// A HAVING condition whose aggregate comparisons read `HavingAggregate0`, `HavingAggregate1`… instead,
    /// the aggregates listed in `aggregates` in that order.
    static func havingOverViews(_ condition: SOQLCondition, aggregates: inout [(function: SOQLAggregate.Function, path: SOQLFieldPath)]) -> SOQLCondition {
        switch condition {
        case .and(let members): return .and(members.map { havingOverViews($0, aggregates: &aggregates) })
        case .or(let members): return .or(members.map { havingOverViews($0, aggregates: &aggregates) })
        case .not(let negated): return .not(havingOverViews(negated, aggregates: &aggregates))
        case .comparison(var comparison):
            guard let function = comparison.aggregate, let field = try? SOQLFieldPath("HavingAggregate\(aggregates.count)") else { return condition }
            aggregates.append((function, comparison.field))
            comparison.field = field
            comparison.aggregate = nil
            return .comparison(comparison)
        }
    }
}
