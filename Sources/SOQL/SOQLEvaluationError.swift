/// Why a condition could not be evaluated.
public enum SOQLEvaluationError: Error, Sendable, Hashable {
    /// A semi-join or anti-join met an evaluator built without `subqueryValues`.
    case subqueryWithoutResolver(SOQLQuery)
}
