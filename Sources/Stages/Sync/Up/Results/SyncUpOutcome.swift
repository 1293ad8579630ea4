import JSON

/// What became of one record's write.
enum SyncUpOutcome: Sendable {
    /// The org accepted it; `id` is the record's id (new for a create).
    case succeeded(id: String?)
    /// An upsert the org applied to a record it already had (matched by external id): an
    /// update, counted as one.
    case matched(id: String?)
    /// The org refused it.
    case failed(SyncUpError)
    /// The answer was lost: the org may or may not have applied it.
    case uncertain(String)
    /// Created and deleted locally: removed without a request.
    case discarded
    /// Dry run: what would have been sent.
    case planned
    /// Not sent: a record it refers to is uncertain (or was not confirmed); it waits for it.
    case unresolved(String)
    /// Not sent, or refused before anything was applied, because the sync up stopped (daily
    /// limit, refused login): left dirty, nothing to reconcile, not counted.
    case notSent

    var isSuccess: Bool {
        switch self {
        case .succeeded, .matched: return true
        default: return false
        }
    }

    /// The record's id when the org accepted the write.
    var acceptedId: String? {
        switch self {
        case .succeeded(let id), .matched(let id): return id
        default: return nil
        }
    }

    var isUncertain: Bool {
        if case .uncertain = self { return true }
        return false
    }

    var uncertainMessage: String? {
        switch self {
        case .uncertain(let message): return "the org's answer was lost: \(message)"
        case .unresolved(let message): return "not sent: \(message)"
        default: return nil
        }
    }

    /// `true` when the org's answer said what became of the write (or none was sent), so its
    /// journal entry can go.
    var isSettled: Bool {
        if case .uncertain = self { return false }
        return true
    }

    var error: SyncUpError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// The org's error for one record, as stored in `__last_error__`.
struct SyncUpError: Sendable, Equatable {
    var status: Int
    /// The first error object (`errorCode` / `statusCode`, `message`, `fields`).
    var json: JSONObject

    /// Keeps the org's error object; a Collections error (`statusCode`) also gets `errorCode`, so
    /// `__last_error__` reads the same whatever API carried the record.
    init(status: Int, json: JSONObject) {
        self.status = status
        var json = json
        if json["errorCode"] == nil, let code = json["statusCode"] { json["errorCode"] = code }
        self.json = json
    }

    init(status: Int, code: String, message: String, fields: [String] = []) {
        self.init(status: status, json: ["errorCode": .string(code), "message": .string(message),
                                         "fields": .array(fields.map(JSONValue.string))])
    }

    /// A Bulk result's `sf__Error`, `CODE:message:FIELD1,FIELD2 --`, whose message may itself
    /// hold colons (`REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --`).
    init(bulkError text: String) {
        guard let colon = text.firstIndex(of: ":") else {
            self.init(status: 400, code: text, message: text)
            return
        }
        var message = String(text[text.index(after: colon)...])
        var fields: [String] = []
        if message.hasSuffix(" --"), let last = message.lastIndex(of: ":") {
            fields = message[message.index(after: last)...].dropLast(3).split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            message = String(message[..<last])
        }
        self.init(status: 400, code: String(text[..<colon]), message: message, fields: fields)
    }

    var code: String { json["errorCode"]?.stringValue ?? json["statusCode"]?.stringValue ?? "HTTP_\(status)" }
    var message: String { json["message"]?.stringValue ?? "" }
    var fields: [String] { json["fields"]?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// The record itself does not exist (any more) on the server.
    var recordMissing: Bool {
        if status == 404 { return true }
        if code == "ENTITY_IS_DELETED" || code == "NOT_FOUND" { return fields.isEmpty || fields == ["Id"] }
        return code == "INVALID_CROSS_REFERENCE_KEY" && (fields.isEmpty || fields == ["Id"])
    }

    /// The code of a request the client retried until it gave up, every attempt refused.
    static let retriesExhausted = "RETRIES_EXHAUSTED"
    /// The code of an idempotent write (an upsert, an update, a delete) the client gave up on after
    /// an attempt's answer was lost: the org may have applied it, and sending it again is safe.
    static let answerLost = "ANSWER_LOST"
    /// The code of a child the org did not apply because its Collections call, sent in one Composite
    /// request with the parents, referred to a parent that failed (not its own): sent again at once.
    static let siblingParentFailed = "CALL_HALTED_BY_OTHER_PARENT"
    /// The code of a record left alone under LEAVE_IF_CHANGED: the org's copy changed since.
    static let conflict = "CONFLICT"
    /// The code, in result rows and entries, of a write that may or may not have been applied.
    static let uncertain = "UNCERTAIN"
    /// The code of a record not sent: it refers to a local record that has no server id.
    static let unresolvedReference = "UNRESOLVED_REFERENCE"
    /// The code of a record a request's answer said nothing about.
    static let noResponse = "NO_RESPONSE"
    /// The org's code for a Composite subrequest rolled back because another failed.
    static let processingHalted = "PROCESSING_HALTED"

    /// An error that says "try again later": the org applied nothing (row lock, busy server).
    var isTransient: Bool {
        [Self.retriesExhausted, Self.answerLost, Self.siblingParentFailed, "UNABLE_TO_LOCK_ROW", "SERVER_UNAVAILABLE", "REQUEST_RUNNING_TOO_LONG"].contains(code)
    }

    /// A record this one refers to through `field` does not exist on the server.
    func referenceMissing(_ field: String) -> Bool {
        ["INVALID_CROSS_REFERENCE_KEY", "ENTITY_IS_DELETED", "FIELD_INTEGRITY_EXCEPTION"].contains(code) && fields.contains(field)
    }
}
