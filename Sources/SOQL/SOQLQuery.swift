/// A SOQL SELECT statement.
///
/// Parse one with `SOQL.parseQuery(_:)`, or build one from parts; `description` prints canonical SOQL
/// that parses back to an equal query. Field paths written with the `FROM` alias (`a.Name` in
/// `FROM Account a`) are stored without it, as Salesforce names them in results.
public struct SOQLQuery: Sendable, Hashable, CustomStringConvertible {
    public var select: [SOQLSelectItem]
    public var from: SOQLObjectReference
    public var whereCondition: SOQLCondition?
    public var orderBy: [SOQLOrdering]
    /// A non-negative row limit.
    public var limit: Int?
    /// A non-negative number of rows to skip.
    public var offset: Int?
    /// `GROUP BY` fields: one AggregateResult row per distinct combination of their values.
    public var groupBy: [SOQLFieldPath] = []
    /// `HAVING`: which `GROUP BY` rows to keep, by grouped fields and aggregates (`COUNT(Id) > 1`).
    public var having: SOQLCondition?
    /// `WITH SECURITY_ENFORCED`, `WITH USER_MODE` or `WITH SYSTEM_MODE`: the word after `WITH`.
    /// An org applies it to the running user's access; the evaluator, which has no access rules,
    /// keeps it only so the query prints back as written.
    public var withClause: String?
    /// `FOR VIEW`, `FOR REFERENCE` or `FOR UPDATE`: the word after `FOR` (recently viewed
    /// tracking and row locks, which have no effect on the result).
    public var forClause: String?

    public init(
        select: [SOQLSelectItem], from: SOQLObjectReference, where whereCondition: SOQLCondition? = nil,
        orderBy: [SOQLOrdering] = [], limit: Int? = nil, offset: Int? = nil
    ) {
        self.select = select
        self.from = from
        self.whereCondition = whereCondition
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
    }

    /// `SELECT <fields> FROM <objectType>`, every name checked: `try SOQLQuery(selecting: ["Id"], from: "Account")`.
    public init(selecting fields: [String], from objectType: String) throws(SOQLError) {
        var items: [SOQLSelectItem] = []
        for field in fields { items.append(.field(try SOQLFieldPath(field))) }
        self.init(select: items, from: try SOQLObjectReference(objectType))
    }

    /// ANDs `condition` onto the WHERE clause. An existing OR keeps its meaning: the printer writes
    /// `(A OR B) AND condition`.
    public mutating func addFilter(_ condition: SOQLCondition) {
        switch whereCondition {
        case nil: whereCondition = condition
        case .and(let members)?: whereCondition = .and(members + [condition])
        case let existing?: whereCondition = .and([existing, condition])
        }
    }

    /// A copy with `condition` ANDed onto the WHERE clause (see `addFilter(_:)`).
    public func addingFilter(_ condition: SOQLCondition) -> SOQLQuery {
        var query = self
        query.addFilter(condition)
        return query
    }

    /// The canonical SOQL text.
    public var description: String { SOQLPrinter.query(self) }
}
