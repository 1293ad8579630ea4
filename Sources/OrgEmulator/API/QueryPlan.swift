import JSON
import SOQL

/// A parsed query checked against the schema: its object, and the objects its parent paths and
/// subqueries reach. Field names keep the query's spelling (answers take the schema's).
struct QueryPlan: Sendable {
    let query: SOQLQuery
    let text: String
    let object: ObjectSchema
    /// Child subqueries by output name (the relationship name), with the child object.
    let subqueries: [(name: String, relationship: ChildRelationship, plan: QueryPlan)]

    /// Checks `query` against `schema`, producing INVALID_TYPE / INVALID_FIELD errors positioned in `text`.
    init(query: SOQLQuery, text: String, schema: OrgSchema, object overrideObject: ObjectSchema? = nil) throws(SOQLError) {
        self.query = query
        self.text = text
        guard let object = overrideObject ?? schema.object(query.from.name) else {
            throw SOQLError.unsupportedObjectType(query.from.name, at: query.from.position ?? .init(row: 1, column: 1), in: text)
        }
        self.object = object
        var subqueries: [(String, ChildRelationship, QueryPlan)] = []
        func check(_ path: SOQLFieldPath) throws(SOQLError) {
            try Self.resolve(path, from: object, schema: schema, text: text)
        }
        for item in query.select {
            switch item {
            case .field(let path), .label(let path): try check(path)
            case .aggregate(let aggregate): try check(aggregate.field)
            case .count: break
            case .subquery(let subquery):
                guard let relationship = object.childRelationship(subquery.from.name), let name = relationship.relationshipName,
                      let child = schema.object(relationship.childSObject) else {
                    throw SOQLError(.invalidType,
                                    "Didn't understand relationship '\(subquery.from.name)' in FROM part of query call. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name. Please reference your WSDL or the describe call for the appropriate names.",
                                    at: subquery.from.position ?? .init(row: 1, column: 1), in: text)
                }
                subqueries.append((name, relationship, try QueryPlan(query: subquery, text: text, schema: schema, object: child)))
            }
        }
        if let condition = query.whereCondition { try Self.checkCondition(condition, object: object, schema: schema, text: text) }
        for ordering in query.orderBy { try check(ordering.field) }
        for field in query.groupBy { try check(field) }
        if !query.groupBy.isEmpty {
            let grouped = Set(query.groupBy.map { $0.description.lowercased() })
            for path in query.select.compactMap(\.fieldPath) where !grouped.contains(path.description.lowercased()) {
                throw SOQLError(.malformedQuery, "Field must be grouped or aggregated: \(path.fieldName)", at: path.position ?? .init(row: 1, column: 1), in: text)
            }
            for ordering in query.orderBy where !grouped.contains(ordering.field.description.lowercased()) {
                throw SOQLError(.malformedQuery, "Ordered field must be grouped or aggregated: \(ordering.field.fieldName)",
                                at: ordering.field.position ?? .init(row: 1, column: 1), in: text)
            }
        }
        self.subqueries = subqueries
    }

    /// The same checked plan with `query` changed in what needs no new check (ordering, paging).
    init(copying plan: QueryPlan, query: SOQLQuery) {
        self.query = query
        text = plan.text
        object = plan.object
        subqueries = plan.subqueries
    }

    static func checkCondition(_ condition: SOQLCondition, object: ObjectSchema, schema: OrgSchema, text: String) throws(SOQLError) {
        switch condition {
        case .and(let members), .or(let members):
            for member in members { try checkCondition(member, object: object, schema: schema, text: text) }
        case .not(let inner):
            try checkCondition(inner, object: object, schema: schema, text: text)
        case .comparison(let comparison):
            try resolve(comparison.field, from: object, schema: schema, text: text)
            if case .subquery(let subquery) = comparison.operand {
                _ = try QueryPlan(query: subquery, text: text, schema: schema)
            }
        }
    }

    /// Checks a field path (the parser has already removed a FROM alias): each relationship must
    /// exist, then the field on the object reached.
    @discardableResult
    static func resolve(_ path: SOQLFieldPath, from object: ObjectSchema, schema: OrgSchema, text: String)
        throws(SOQLError) -> FieldSchema
    {
        let components = Array(path.components)
        var current = object
        let position = path.position ?? .init(row: 1, column: 1)
        for name in components.dropLast() {
            guard let reference = current.relationship(name), let target = reference.referenceTo.flatMap({ schema.object($0) }) else {
                throw SOQLError.noSuchColumn(name, onEntity: current.name, at: position, in: text)
            }
            current = target
        }
        guard let field = current.field(components.last!) else {
            throw SOQLError.noSuchColumn(components.last!, onEntity: current.name, at: position, in: text)
        }
        return field
    }
}
