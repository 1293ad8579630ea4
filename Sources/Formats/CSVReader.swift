import Foundation

/// The one CSV parser (RFC 4180): quoted fields with doubled quotes, embedded delimiters and
/// line breaks, CRLF or LF, an optional UTF-8 byte order mark, a configurable delimiter and
/// encoding; a row it cannot read comes back as ``Row/malformed(reason:line:raw:)`` with its line.
/// It reads a file in 64 KiB chunks, so memory stays flat however large the file is, or text
/// already in memory (a Bulk API body, a result file's header).
///
/// It has no dependencies beyond Foundation, so it can be compiled alone and fuzzed.
public struct CSVReader: Sequence {
    /// The text encodings a CSV file may use.
    public enum Encoding: String, Sendable, CaseIterable {
        case utf8 = "utf-8"
        case latin1 = "iso-8859-1"
        case windows1252 = "windows-1252"
    }

    /// One row, or the reason it cannot be read; `line` is the 1-based physical line it starts on.
    public enum Row: Sendable, Equatable {
        case fields([String], line: Int)
        case malformed(reason: String, line: Int, raw: String)
    }

    /// Where the bytes come from.
    enum Source {
        case file(FileHandle)
        case memory([UInt8])
    }

    let source: Source
    let delimiter: UInt8
    let encoding: Encoding

    /// Why a file cannot be read as CSV.
    public struct OpenError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Opens `path`; throws when it is not a regular file that can be opened for reading.
    public init(path: String, delimiter: Character = ",", encoding: Encoding = .utf8) throws(OpenError) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw OpenError(description: errno == ENOENT ? "no such file" : "cannot be read (\(String(cString: strerror(errno))))") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw OpenError(description: (status.st_mode & S_IFMT) == S_IFDIR ? "is a directory, not a CSV file" : "is not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw OpenError(description: "cannot be read (permission denied?)") }
        source = .file(handle)
        self.delimiter = delimiter.asciiValue ?? UInt8(ascii: ",")
        self.encoding = encoding
    }

    /// Reads `text` (UTF-8).
    public init(text: String, delimiter: Character = ",") {
        source = .memory(Array(text.utf8))
        self.delimiter = delimiter.asciiValue ?? UInt8(ascii: ",")
        encoding = .utf8
    }

    /// Reads `bytes` (UTF-8) without copying them into a string first (a large Bulk API answer).
    public init(bytes: [UInt8], delimiter: Character = ",") {
        source = .memory(bytes)
        self.delimiter = delimiter.asciiValue ?? UInt8(ascii: ",")
        encoding = .utf8
    }

    public func makeIterator() -> Iterator {
        Iterator(source: source, delimiter: delimiter, encoding: encoding)
    }

    public struct Iterator: IteratorProtocol {
        var source: Source
        let delimiter: UInt8
        let encoding: Encoding
        var buffer: [UInt8] = []
        var position = 0
        /// Bytes of the chunks read before the one in `buffer`.
        var consumedBefore = 0
        var atEnd = false
        var line = 1
        var first = true
        /// Set when reading the file failed part-way; iteration has then ended.
        public private(set) var readError: String?

        /// Bytes of the source read into rows so far (to measure progress against its size).
        public var bytesRead: Int { consumedBefore + position }

        init(source: Source, delimiter: UInt8, encoding: Encoding) {
            self.source = source
            self.delimiter = delimiter
            self.encoding = encoding
        }

        /// The next byte, refilling the buffer as needed; `nil` at end of file.
        mutating func nextByte() -> UInt8? {
            if position >= buffer.count {
                guard !atEnd else { return nil }
                let chunk: [UInt8]
                switch source {
                case .file(let handle):
                    do {
                        chunk = [UInt8](try handle.read(upToCount: 64 * 1024) ?? Data())
                    } catch {
                        readError = "reading failed at line \(line): \(error.localizedDescription)"
                        atEnd = true
                        return nil
                    }
                case .memory(let bytes):
                    chunk = bytes
                    source = .memory([])
                }
                if chunk.isEmpty {
                    atEnd = true
                    return nil
                }
                consumedBefore += buffer.count
                buffer = chunk
                position = 0
                if first {
                    first = false
                    // Byte order marks, repeated when a tool added one to a file that had one.
                    while buffer[position...].starts(with: [0xEF, 0xBB, 0xBF]) { position += 3 }
                    if position >= buffer.count { return nextByte() }
                }
            }
            defer { position += 1 }
            return buffer[position]
        }

        mutating func peekByte() -> UInt8? {
            guard let byte = nextByte() else { return nil }
            position -= 1
            return byte
        }

        public mutating func next() -> Row? {
            var fields: [String] = []
            var field: [UInt8] = []
            var raw: [UInt8] = []
            var quoted = false
            var fieldWasQuoted = false
            var problem: String?
            let startLine = line
            var sawAnything = false
            while let byte = nextByte() {
                sawAnything = true
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if peekByte() == UInt8(ascii: "\"") {
                            _ = nextByte()
                            field.append(byte)
                            raw += [byte, byte]
                        } else {
                            quoted = false
                            raw.append(byte)
                        }
                    } else {
                        if byte == UInt8(ascii: "\n") { line += 1 }
                        field.append(byte)
                        raw.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    raw.append(byte)
                    if field.isEmpty && !fieldWasQuoted {
                        quoted = true
                        fieldWasQuoted = true
                    } else if problem == nil {
                        problem = "a quote inside an unquoted field (field \(fields.count + 1))"
                    }
                case delimiter:
                    raw.append(byte)
                    fields.append(decode(field, &problem, fields.count + 1))
                    field.removeAll(keepingCapacity: true)
                    fieldWasQuoted = false
                case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    if byte == UInt8(ascii: "\r") && peekByte() == UInt8(ascii: "\n") { _ = nextByte() }
                    line += 1
                    fields.append(decode(field, &problem, fields.count + 1))
                    return finish(fields, problem: problem, line: startLine, raw: raw)
                default:
                    if fieldWasQuoted && problem == nil { problem = "text after the closing quote of field \(fields.count + 1)" }
                    field.append(byte)
                    raw.append(byte)
                }
            }
            guard sawAnything else { return nil }
            if quoted { problem = "a quoted field is not closed before the end of the file" }
            fields.append(decode(field, &problem, fields.count + 1))
            return finish(fields, problem: problem, line: startLine, raw: raw)
        }

        func finish(_ fields: [String], problem: String?, line: Int, raw: [UInt8]) -> Row {
            if let problem { return .malformed(reason: problem, line: line, raw: String(decoding: raw, as: UTF8.self)) }
            return .fields(fields, line: line)
        }

        func decode(_ bytes: [UInt8], _ problem: inout String?, _ number: Int) -> String {
            switch encoding {
            case .utf8:
                if let text = String(validating: bytes, as: UTF8.self) { return text }
                if problem == nil { problem = "invalid UTF-8 in field \(number)" }
                return String(decoding: bytes, as: UTF8.self)
            case .latin1:
                return String(bytes.map { Character(Unicode.Scalar($0)) })
            case .windows1252:
                return String(bytes.map { Character(Self.windows1252Scalar($0)) })
            }
        }

        /// Windows-1252 differs from Latin-1 in 0x80–0x9F.
        static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
            let table: [UInt8: UInt32] = [
                0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x02C6,
                0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201C,
                0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC, 0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A,
                0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
            ]
            return Unicode.Scalar(table[byte] ?? UInt32(byte))!
        }
    }
}

extension CSVReader {
    /// A row of in-memory CSV that cannot be read, with its 1-based line.
    public struct MalformedRow: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// Every row of `text`; throws at the first row that cannot be read.
    public static func rows(of text: String, delimiter: Character = ",") throws(MalformedRow) -> [[String]] {
        var rows: [[String]] = []
        for row in CSVReader(text: text, delimiter: delimiter) {
            switch row {
            case .fields(let fields, _): rows.append(fields)
            case .malformed(let reason, let line, _): throw MalformedRow(line: line, reason: reason)
            }
        }
        return rows
    }
}
