import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import JSON

/// Streams records out of an XML file with Foundation's SAX `XMLParser` in stream mode (no DOM,
/// and not its `Data` mode, which fails on inputs of 10 MB or more on Linux).
///
/// Each `record` element becomes one record: its attributes and simple child elements are fields.
/// A `children` rule turns repeated nested elements (`<Contacts><Contact>…`) into child records held
/// under a relationship name as a query result (`{"totalSize", "done", "records"}`).
public struct XMLRecordReader: Sendable {
    /// How nested elements become child records.
    public struct ChildRule: Sendable {
        public var element: String
        /// The wrapping element, if any (`Contacts` around each `Contact`).
        public var within: String?
        public var sobjectType: String?
        /// The key the children are stored under; default the wrapping element or the element name.
        public var relationship: String

        public init(element: String, within: String?, sobjectType: String?, relationship: String?) {
            self.element = element
            self.within = within
            self.sobjectType = sobjectType
            self.relationship = relationship ?? within ?? element
        }
    }

    /// A parse error with its 1-based line and column.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String

        public var description: String { "line \(line), column \(column): \(message)" }
    }

    let path: String
    let recordElement: String
    let sobjectType: String?
    let children: [ChildRule]

    public init(path: String, recordElement: String, sobjectType: String?, children: [ChildRule]) {
        self.path = path
        self.recordElement = recordElement
        self.sobjectType = sobjectType
        self.children = children
    }

    /// Checks that the whole file is well-formed XML, reading it once without building records,
    /// so a stage can refuse a broken file before it hands on a single record.
    public func validate() throws(SyntaxError) {
        try checkEncoding()
        try parse(DocumentDelegate())
    }

    /// The encodings a file may declare besides UTF-8: every byte of them converts to a valid
    /// character, so the parser never hands on invalid text.
    static let singleByteEncodings: Set<String> = ["iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1"]

    /// What Foundation's parser would trap on instead of reporting, checked byte by byte first:
    /// text that is not valid UTF-8 in a name or an attribute value (so a UTF-8 or US-ASCII file is
    /// validated, Latin-1 and UTF-16 with its byte order mark are taken as they are, and any other
    /// declared encoding is refused with how to convert the file), and a processing instruction
    /// without data (`<?target?>`).
    func checkEncoding() throws(SyntaxError) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw SyntaxError(line: 0, column: 0, message: "cannot be opened as a file") }
        defer { try? handle.close() }
        var validator: UTF8Validator? = UTF8Validator()
        var instructions = InstructionScanner()
        var first = true
        while let chunk = try? handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
            if first {
                first = false
                if chunk.starts(with: [0xFE, 0xFF]) || chunk.starts(with: [0xFF, 0xFE]) { return }
                let prolog = String(decoding: chunk.prefix(200), as: UTF8.self)
                if prolog.drop(while: { $0 == "\u{FEFF}" }).hasPrefix("<?xml"),
                   let match = prolog.range(of: #"encoding\s*=\s*["'][^"']*["']"#, options: .regularExpression) {
                    let name = prolog[match].split(whereSeparator: { $0 == "\"" || $0 == "'" }).dropFirst().first.map { $0.lowercased() } ?? ""
                    if Self.singleByteEncodings.contains(name) {
                        validator = nil
                    } else if !["utf-8", "utf8", "us-ascii", "ascii"].contains(name) {
                        throw SyntaxError(line: 1, column: 1, message: "the declared encoding \"\(name)\" is not supported; convert the file to UTF-8 (for example iconv -f \(name.isEmpty ? "ENCODING" : name) -t UTF-8)")
                    }
                }
            }
            if let position = validator?.feed(chunk) {
                throw SyntaxError(line: position.line, column: position.column, message: "invalid UTF-8 (declare the file's encoding in its <?xml …?> line if it is not UTF-8)")
            }
            if let line = instructions.feed(chunk) {
                throw SyntaxError(line: line, column: 1, message: "a processing instruction without data (<?name?>) is not supported")
            }
        }
        if let position = validator?.finish() {
            throw SyntaxError(line: position.line, column: position.column, message: "the file ends inside a UTF-8 character")
        }
    }

    /// Parses the whole file, calling `onRecord` for each record as soon as it is complete.
    /// `onRecord` returns `false` to stop early.
    public func read(_ onRecord: @escaping (JSONObject) -> Bool) throws(SyntaxError) {
        try parse(RecordDelegate(recordElement: recordElement, sobjectType: sobjectType, children: children, onRecord: onRecord))
    }

    private func parse(_ delegate: DocumentDelegate) throws(SyntaxError) {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, let stream = InputStream(fileAtPath: path) else {
            throw SyntaxError(line: 0, column: 0, message: "cannot be opened as a file")
        }
        let parser = XMLParser(stream: stream)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        let finished = parser.parse()
        if delegate.stopped { return }
        if let failure = delegate.failure { throw failure }
        if !finished {
            let code = (parser.parserError as NSError?)?.code ?? 0
            throw SyntaxError(line: parser.lineNumber, column: parser.columnNumber, message: Self.describe(code))
        }
        // libxml2 in stream mode can take a document cut short for a finished one.
        if !delegate.sawRoot {
            throw SyntaxError(line: parser.lineNumber, column: parser.columnNumber, message: "the file holds no XML element (is it empty?)")
        }
        if delegate.depth > 0 {
            throw SyntaxError(line: parser.lineNumber, column: parser.columnNumber,
                              message: "the document ended before its elements were closed (\(delegate.depth) still open; is the file cut short?)")
        }
    }

    /// A readable name for the libxml2 error codes met most often.
    static func describe(_ code: Int) -> String {
        switch code {
        case 1: return "a text or attribute value is larger than the XML parser's 10,000,000-byte limit (more than any Salesforce field holds)"
        case 4, 5: return "the document ended before its elements were closed"
        case 9: return "invalid character"
        case 23, 26: return "undefined or malformed entity (escape & as &amp;)"
        case 38, 39, 40, 41: return "malformed attribute"
        case 73, 76: return "an element is closed with another element's name"
        case 111: return "the document has content after its root element"
        default: return "malformed XML (parser error \(code))"
        }
    }
}

/// Checks UTF-8 a chunk at a time (a character may span chunks), tracking lines and columns:
/// no stray continuation bytes, no overlong forms, no surrogates, nothing past U+10FFFF.
struct UTF8Validator {
    private var pending = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    private var line = 1
    private var column = 0

    /// The position of the first invalid byte in `chunk`, if any.
    mutating func feed(_ chunk: Data) -> (line: Int, column: Int)? {
        for byte in chunk {
            if pending > 0 {
                guard byte >= lower && byte <= upper else { return (line, column + 1) }
                lower = 0x80
                upper = 0xBF
                pending -= 1
                continue
            }
            if byte == 0x0A { line += 1; column = 0; continue }
            column += 1
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: pending = 1
            case 0xE0: pending = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: pending = 2
            case 0xED: pending = 2; upper = 0x9F
            case 0xF0: pending = 3; lower = 0x90
            case 0xF1...0xF3: pending = 3
            case 0xF4: pending = 3; upper = 0x8F
            default: return (line, column)
            }
        }
        return nil
    }

    /// The position of an unfinished character at the end, if any.
    func finish() -> (line: Int, column: Int)? {
        pending > 0 ? (line, column) : nil
    }
}

/// Finds `<?name?>` (a processing instruction with no data) across chunks, by line.
struct InstructionScanner {
    private enum State { case text, lessThan, name(Int), question }
    private var state = State.text
    private var line = 1

    mutating func feed(_ chunk: Data) -> Int? {
        for byte in chunk {
            if byte == 0x0A { line += 1 }
            switch state {
            case .text:
                if byte == UInt8(ascii: "<") { state = .lessThan }
            case .lessThan:
                state = byte == UInt8(ascii: "?") ? .name(0) : byte == UInt8(ascii: "<") ? .lessThan : .text
            case .name(let length):
                switch byte {
                case UInt8(ascii: "?"): state = length > 0 ? .question : .text
                case 0x20, 0x09, 0x0A, 0x0D: state = .text
                case UInt8(ascii: "<"): state = .lessThan
                default: state = .name(length + 1)
                }
            case .question:
                if byte == UInt8(ascii: ">") { return line }
                state = byte == UInt8(ascii: "<") ? .lessThan : .text
            }
        }
        return nil
    }
}

/// Follows the document's structure: whether a root element was seen, how many elements are
/// open, and the first error with the position at which the parser reported it.
private class DocumentDelegate: NSObject, XMLParserDelegate {
    var stopped = false
    var failure: XMLRecordReader.SyntaxError?
    var sawRoot = false
    var depth = 0

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        sawRoot = true
        depth += 1
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        depth -= 1
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard failure == nil else { return }
        failure = XMLRecordReader.SyntaxError(line: parser.lineNumber, column: parser.columnNumber,
                                              message: XMLRecordReader.describe((parseError as NSError).code))
    }

    // Declared here so subclasses can override them: the protocol's witnesses are this class's.
    func parser(_ parser: XMLParser, foundCharacters string: String) {}

    func parser(_ parser: XMLParser, foundCDATA block: Data) {}
}

/// Builds records from SAX events.
private final class RecordDelegate: DocumentDelegate {
    let recordElement: String
    let sobjectType: String?
    let children: [XMLRecordReader.ChildRule]
    let onRecord: (JSONObject) -> Bool

    /// The record being built, and the child being built inside it.
    var record: JSONObject?
    var child: (rule: XMLRecordReader.ChildRule, fields: JSONObject)?
    var childLists: [String: [JSONValue]] = [:]
    /// Element names open inside the current record (or child).
    var path: [String] = []
    var text = ""

    init(recordElement: String, sobjectType: String?, children: [XMLRecordReader.ChildRule], onRecord: @escaping (JSONObject) -> Bool) {
        self.recordElement = recordElement
        self.sobjectType = sobjectType
        self.children = children
        self.onRecord = onRecord
    }

    override func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        super.parser(parser, didStartElement: name, namespaceURI: namespaceURI, qualifiedName: qualifiedName, attributes: attributes)
        text = ""
        if record == nil {
            guard name == recordElement else { return }
            var fields = JSONObject()
            if let sobjectType { fields["attributes"] = ["type": .string(sobjectType)] }
            for key in attributes.keys.sorted() { fields[key] = .string(attributes[key]!) }
            record = fields
            path = []
            childLists = [:]
            return
        }
        if child == nil, let rule = children.first(where: { $0.element == name && ($0.within == nil || path.last == $0.within) }) {
            var fields = JSONObject()
            if let type = rule.sobjectType { fields["attributes"] = ["type": .string(type)] }
            for key in attributes.keys.sorted() { fields[key] = .string(attributes[key]!) }
            child = (rule, fields)
            path.append(name)
            return
        }
        path.append(name)
    }

    override func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    override func parser(_ parser: XMLParser, foundCDATA block: Data) {
        text += String(decoding: block, as: UTF8.self)
    }

    override func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        super.parser(parser, didEndElement: name, namespaceURI: namespaceURI, qualifiedName: qualifiedName)
        guard var current = record else { return }
        if path.isEmpty && name == recordElement {
            for (relationship, list) in childLists {
                current[relationship] = ["totalSize": .integer(Int64(list.count)), "done": true, "records": .array(list)]
            }
            record = nil
            if !onRecord(current) {
                stopped = true
                parser.abortParsing()
            }
            return
        }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = ""
        _ = path.popLast()
        if var building = child {
            if name == building.rule.element && path.last != building.rule.element {
                childLists[building.rule.relationship, default: []].append(.object(building.fields))
                child = nil
            } else if !value.isEmpty {
                building.fields[name] = .string(value)
                child = building
            }
            return
        }
        // A child element with text is a field; wrapping elements with no text are not.
        if !value.isEmpty {
            current[name] = .string(value)
            record = current
        }
    }
}
