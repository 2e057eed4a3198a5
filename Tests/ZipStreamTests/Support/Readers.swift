import FileshareTestSupport
import Foundation
import ZipStream

/// What a program printed, and how it exited.
struct ProcessResult: Sendable, CustomStringConvertible {
    var status: Int32
    var output: String
    var errorOutput: String

    var description: String { "status \(status)\n\(output.suffix(2000))\n\(errorOutput.suffix(2000))" }
}

/// Runs a program to the end, its output going through files in `folder` (so
/// a long listing never fills a pipe), in a UTF-8 locale.
func run(_ executable: String, _ arguments: [String], in folder: TemporaryFolder) throws -> ProcessResult {
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw MissingProgram(path: executable)
    }
    let id = UUID().uuidString
    let outputPath = folder("stdout-\(id)")
    let errorPath = folder("stderr-\(id)")
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    let errorOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["LC_ALL"] = "C.UTF-8"
    process.environment = environment
    process.standardOutput = output
    process.standardError = errorOutput
    try process.run()
    process.waitUntilExit()
    try output.close()
    try errorOutput.close()
    defer {
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: errorPath)
    }
    return ProcessResult(
        status: process.terminationStatus,
        output: try String(contentsOfFile: outputPath, encoding: .utf8),
        errorOutput: try String(contentsOfFile: errorPath, encoding: .utf8))
}

/// A program the tests need is not installed.
struct MissingProgram: Error, CustomStringConvertible {
    var path: String
    var description: String {
        "\(path) is missing: these tests need Info-ZIP unzip (Debian package unzip) and python3"
    }
}

/// Info-ZIP's `unzip`.
enum InfoZip {
    static let path = "/usr/bin/unzip"

    /// `unzip -t`: reads every entry and checks its CRC-32.
    static func test(_ archive: String, in folder: TemporaryFolder) throws -> ProcessResult {
        try run(path, ["-t", archive], in: folder)
    }

    /// `unzip -l`: the names listed and the count on the last line.
    static func list(_ archive: String, in folder: TemporaryFolder) throws -> (
        names: [String], total: Int?, result: ProcessResult
    ) {
        let result = try run(path, ["-l", archive], in: folder)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        // Between the two dashed rules: "   Length  yyyy-mm-dd hh:mm   name" (the length column widens).
        let rules = lines.indices.filter { lines[$0].hasPrefix("---------") }
        var names: [String] = []
        var total: Int?
        if rules.count == 2 {
            names = lines[(rules[0] + 1)..<rules[1]].map { line in
                (try? /^ *[0-9]+ +[0-9-]+ +[0-9:]+   (.*)$/.wholeMatch(in: line)).flatMap { $0 }.map { String($0.1) }
                    ?? "unparsed: \(line)"
            }
            total = lines[rules[1] + 1].split(separator: " ").dropLast().last.flatMap { Int($0) }
        }
        return (names, total, result)
    }

    /// `unzip -q -o archive -d destination`: extracts everything.
    static func extract(_ archive: String, to destination: String, in folder: TemporaryFolder) throws -> ProcessResult {
        try run(path, ["-q", "-o", archive, "-d", destination], in: folder)
    }
}

/// Python 3's `zipfile`, reading every entry of an archive and checking it
/// against what the test wrote.
enum PythonZipfile {
    /// What the checker expects of one entry.
    struct Expected: Codable {
        var name: String
        var isDirectory: Bool
        var size: UInt64
        /// Checked when given; `zipfile` itself always checks the CRC-32 it
        /// reads against the one recorded.
        var crc: UInt32?
        var mtime: Int64
        var mode: Int
    }

    /// What the checker found.
    struct Report: Codable, CustomStringConvertible {
        var errors: [String]
        var count: Int
        /// Whether the archive ends with ZIP64 end records.
        var zip64End: Bool
        /// How many central directory headers carry a ZIP64 extra field.
        var zip64Entries: Int

        var description: String { "\(count) entries, errors: \(errors)" }
    }

    static func expectations(for entries: [TestEntry]) -> [Expected] {
        entries.map {
            Expected(
                name: $0.storedName, isDirectory: $0.kind == .directory, size: UInt64($0.content.count),
                crc: referenceCRC32($0.content), mtime: $0.modified, mode: $0.mode)
        }
    }

    static func check(_ archive: String, _ expected: [Expected], in folder: TemporaryFolder) throws -> Report {
        let manifest = folder("manifest-\(UUID().uuidString).json")
        try JSONEncoder().encode(expected).write(to: URL(fileURLWithPath: manifest))
        defer { try? FileManager.default.removeItem(atPath: manifest) }
        let result = try run("/usr/bin/env", ["python3", "-c", script, archive, manifest], in: folder)
        guard result.status == 0, let line = result.output.split(separator: "\n").last else {
            return Report(errors: ["python3 failed: \(result)"], count: -1, zip64End: false, zip64Entries: 0)
        }
        return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
    }

    static let script = #"""
        import json, struct, sys, time, zipfile, zlib

        def dos_date_time(seconds):
            t = time.localtime(seconds)
            if t.tm_year < 1980:
                return (1980, 1, 1, 0, 0, 0)
            if t.tm_year > 2107:
                return (2107, 12, 31, 23, 59, 58)
            return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec // 2 * 2)

        def extra_fields(extra):
            fields = {}
            while len(extra) >= 4:
                tag, size = struct.unpack('<HH', extra[:4])
                fields[tag] = extra[4:4 + size]
                extra = extra[4 + size:]
            return fields

        path, manifest = sys.argv[1], sys.argv[2]
        expected = json.load(open(manifest))
        errors, count, zip64_end, zip64_entries = [], -1, False, 0
        try:
            with open(path, 'rb') as f:
                end = zipfile._EndRecData(f)
                zip64_end = end is not None and end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
                count = len(infos)
                names = [i.filename for i in infos]
                if names != [e['name'] for e in expected]:
                    errors.append('names: %r' % names[:10])
                for info, e in zip(infos, expected):
                    n = info.filename
                    if info.is_dir() != e['isDirectory']:
                        errors.append(f'{n}: is_dir() is {info.is_dir()}')
                    if info.compress_type != zipfile.ZIP_STORED:
                        errors.append(f'{n}: method {info.compress_type}')
                    if not info.flag_bits & 0x800:
                        errors.append(f'{n}: no UTF-8 flag')
                    if info.file_size != e['size'] or info.compress_size != e['size']:
                        errors.append(f'{n}: sizes {info.file_size} {info.compress_size}')
                    if e.get('crc') is not None and info.CRC != e['crc']:
                        errors.append(f'{n}: CRC {info.CRC:08x}, expected {e["crc"]:08x}')
                    if info.date_time != dos_date_time(e['mtime']):
                        errors.append(f'{n}: date_time {info.date_time}, expected {dos_date_time(e["mtime"])}')
                    if info.external_attr >> 16 != e['mode']:
                        errors.append(f'{n}: mode {info.external_attr >> 16:o}')
                    fields = extra_fields(info.extra)
                    if 0x0001 in fields:
                        zip64_entries += 1
                    ut = fields.get(0x5455)
                    if -2**31 <= e['mtime'] < 2**31:
                        if ut is None or len(ut) != 5 or ut[0] != 1 or struct.unpack('<i', ut[1:])[0] != e['mtime']:
                            errors.append(f'{n}: extended timestamp {ut!r}')
                    elif ut is not None:
                        errors.append(f'{n}: extended timestamp {ut!r} for a time out of range')
                    crc, size = 0, 0
                    with z.open(info) as member:  # raises BadZipFile if the CRC-32 differs
                        while chunk := member.read(1 << 20):
                            crc = zlib.crc32(chunk, crc)
                            size += len(chunk)
                    if size != e['size'] or crc != info.CRC:
                        errors.append(f'{n}: read {size} bytes, CRC {crc:08x}')
        except Exception as error:
            errors.append(repr(error))
        print(json.dumps({'errors': errors[:20], 'count': count, 'zip64End': zip64_end,
                          'zip64Entries': zip64_entries}))
        """#
}
