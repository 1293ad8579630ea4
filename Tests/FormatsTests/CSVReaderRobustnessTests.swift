import Foundation
import Formats
import Testing

/// The CSV reader on seeded random and mutated inputs: it never crashes, never loops, and accounts
/// for every byte (each row is read or reported malformed).
@Suite struct CSVReaderRobustnessTests {
    /// SplitMix64, so every run feeds the same inputs.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            return z ^ (z >> 31)
        }
    }

    @Test func randomAndMutatedInputsAreAlwaysReadToTheEnd() throws {
        var random = Generator(state: 2026)
        let alphabet: [UInt8] = Array("ab,\"\r\n;é".utf8) + [0xFF, 0xC3, 0x00]
        let seeds = ["Name,City\r\n\"Acme, Inc\",\"Paris\"\r\n", "a,b\n\"x\"\"y\",z\n", "h\n\"open\n", "\u{FEFF}a;b\nc;d"]
        let path = NSTemporaryDirectory() + "csv-fuzz-\(UUID().uuidString).csv"
        defer { try? FileManager.default.removeItem(atPath: path) }
        for round in 0..<2000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 64)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            } else {
                bytes = Array(seeds[Int(random.next() % UInt64(seeds.count))].utf8)
                for _ in 0..<Int(random.next() % 4) where !bytes.isEmpty {
                    bytes[Int(random.next() % UInt64(bytes.count))] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let delimiter: Character = round % 3 == 0 ? ";" : ","
            var rows = 0
            var lastLine = 0
            for row in try CSVReader(path: path, delimiter: delimiter) {
                rows += 1
                let line: Int
                switch row {
                case .fields(_, let start): line = start
                case .malformed(_, let start, _): line = start
                }
                #expect(line > lastLine, "rows start on increasing lines (round \(round))")
                lastLine = line
                if rows > bytes.count + 1 { Issue.record("more rows than bytes in round \(round)"); break }
            }
        }
    }
}
