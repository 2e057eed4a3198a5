import ChangeLog
import PostgresNIO

extension PostgresChangeLog {
    /// What the database keeps of a folder's log: the newest number handed
    /// out and the oldest kept (`latest + 1` when none is kept).
    struct Bounds: Sendable, Hashable {
        var latest: UInt64
        var oldest: UInt64
    }

    /// The log's SQL, each call one round trip or one transaction.
    enum Queries {
        static let columns = "seq, time_ns, event, origin_face, origin_client, origin_user, origin_method"

        /// The folder's bounds, registering the folder first when `create`;
        /// `nil` for a folder that has no log.
        static func open(folder: String, create: Bool, in database: Database) async throws(ChangeLogError) -> Bounds? {
            try await run(database, doing: "open the change log") { connection in
                if create {
                    try await connection.query(
                        "INSERT INTO change_log_folders (folder) VALUES (\(folder)) ON CONFLICT (folder) DO NOTHING",
                        logger: database.logger)
                }
                return try await bounds(folder: folder, on: connection, database: database)
            }
        }

        static func bounds(folder: String, on connection: PostgresConnection, database: Database) async throws
            -> Bounds?
        {
            let rows = try await connection.query(
                """
                SELECT f.last_seq, (SELECT min(seq) FROM change_log c WHERE c.folder = f.folder)
                FROM change_log_folders f WHERE f.folder = \(folder)
                """, logger: database.logger)
            for try await (latest, oldest) in rows.decode((Int64, Int64?).self) {
                let newest = UInt64(latest)
                return Bounds(latest: newest, oldest: oldest.map { UInt64($0) } ?? newest + 1)
            }
            return nil
        }

        /// Moves the folder's writer epoch on and returns it with the newest
        /// number committed: from now on only a commit naming this epoch is taken.
        static func takeOver(folder: String, in database: Database) async throws(ChangeLogError) -> (Int64, UInt64) {
            try await run(database, doing: "take over the change log") { connection in
                try await connection.query(
                    "INSERT INTO change_log_folders (folder) VALUES (\(folder)) ON CONFLICT (folder) DO NOTHING",
                    logger: database.logger)
                let rows = try await connection.query(
                    """
                    UPDATE change_log_folders SET writer_epoch = writer_epoch + 1
                    WHERE folder = \(folder) RETURNING writer_epoch, last_seq
                    """, logger: database.logger)
                for try await (epoch, latest) in rows.decode((Int64, Int64).self) {
                    return (epoch, UInt64(latest))
                }
                return (0, 0)
            }
        }

        /// Commits a batch of consecutive records, the folder's `last_seq`
        /// moving on with them — only from the number before the batch, and
        /// only in `epoch` when one is given, so a second writer is caught
        /// (`.busy`) and nothing is interleaved. A record without an origin
        /// takes that of a follower's change in progress on its paths
        /// (``PostgresOrigins``); the records are returned as committed.
        static func commit(_ batch: [ChangeRecord], folder: String, epoch: Int64?, in database: Database)
            async throws(ChangeLogError) -> [ChangeRecord]
        {
            guard let first = batch.first, let last = batch.last else { return [] }
            var seqs: [Int64] = []
            var times: [Int64] = []
            var events: [String] = []
            var faces: [String] = []
            var clients: [String] = []
            var users: [String] = []
            var methods: [String] = []
            var firstPaths: [String] = []
            var secondPaths: [String] = []
            for record in batch {
                seqs.append(Int64(record.seq))
                times.append(record.time)
                events.append(storable(record.event))
                // '' stands for none (NULLIF below): none of these is ever empty.
                faces.append(storable(record.origin?.face ?? ""))
                clients.append(storable(record.origin?.client ?? ""))
                users.append(storable(record.origin?.user ?? ""))
                methods.append(storable(record.origin?.method ?? ""))
                let paths = record.origin == nil ? PostgresOrigins.paths(of: record) : []
                firstPaths.append(storable(paths.first ?? ""))
                secondPaths.append(storable(paths.dropFirst().first ?? ""))
            }
            let before = Int64(first.seq) - 1
            let newest = Int64(last.seq)
            let logger = database.logger
            let committed = try await transaction(database, doing: "commit to the change log") {
                connection -> [Int64: ChangeOrigin]? in
                let moved = try await connection.query(
                    """
                    UPDATE change_log_folders SET last_seq = \(newest)
                    WHERE folder = \(folder) AND last_seq = \(before)
                        AND writer_epoch = COALESCE(\(epoch)::int8, writer_epoch)
                    RETURNING last_seq
                    """, logger: logger
                ).collect()
                guard !moved.isEmpty else { return nil }
                let rows = try await connection.query(
                    """
                    INSERT INTO change_log (folder, \(unescaped: columns))
                    SELECT \(folder), r.s, r.t, r.e,
                        CASE WHEN r.f <> '' THEN r.f ELSE o.face END,
                        CASE WHEN r.f <> '' THEN NULLIF(r.c, '') ELSE o.client END,
                        CASE WHEN r.f <> '' THEN NULLIF(r.u, '') ELSE o.user_name END,
                        CASE WHEN r.f <> '' THEN NULLIF(r.m, '') ELSE o.method END
                    FROM unnest(\(seqs)::int8[], \(times)::int8[], \(events)::text[], \(faces)::text[],
                        \(clients)::text[], \(users)::text[], \(methods)::text[], \(firstPaths)::text[],
                        \(secondPaths)::text[]) AS r(s, t, e, f, c, u, m, p1, p2)
                    LEFT JOIN LATERAL (
                        SELECT face, client, user_name, method FROM change_origins g
                        WHERE r.f = '' AND r.p1 <> '' AND g.folder = \(folder) AND g.expires_at > now()
                            AND EXISTS (
                                SELECT 1 FROM unnest(g.paths) AS q(path), unnest(ARRAY[r.p1, r.p2]) AS x(path)
                                WHERE x.path <> '' AND (x.path = q.path OR starts_with(x.path, q.path || '/')
                                    OR starts_with(q.path, x.path || '/')))
                        ORDER BY g.id LIMIT 1) o ON true
                    RETURNING seq, origin_face, origin_client, origin_user, origin_method
                    """, logger: logger)
                var attached: [Int64: ChangeOrigin] = [:]
                for try await (seq, face, client, user, method) in rows.decode(
                    (Int64, String?, String?, String?, String?).self)
                {
                    if let face, let client, let method {
                        attached[seq] = ChangeOrigin(face: face, client: client, user: user, method: method)
                    }
                }
                // Delivered at commit; only a wake-up for the readers.
                try await connection.query("SELECT pg_notify(\(PostgresChangeLog.channel), \(folder))", logger: logger)
                return attached
            }
            guard let committed else {
                throw ChangeLogError(
                    code: .busy,
                    message:
                        "another fileshare server wrote the change log of \(folder) since this one began: only one may write it"
                )
            }
            return batch.map { record in
                guard record.origin == nil, let origin = committed[Int64(record.seq)] else { return record }
                return ChangeRecord(
                    seq: record.seq, entry: ChangeLogEntry(event: record.event, time: record.time, origin: origin))
            }
        }

        /// Up to `limit` records after `cursor`, and the bounds read just after them.
        static func records(folder: String, after cursor: UInt64, limit: Int, in database: Database)
            async throws(ChangeLogError) -> ([ChangeRecord], Bounds)
        {
            try await run(database, doing: "read the change log") { connection in
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: columns) FROM change_log
                    WHERE folder = \(folder) AND seq > \(Int64(clamping: cursor)) ORDER BY seq LIMIT \(limit)
                    """, logger: database.logger)
                var records: [ChangeRecord] = []
                for try await (seq, time, event, face, client, user, method) in rows.decode(
                    (Int64, Int64, String, String?, String?, String?, String?).self)
                {
                    var origin: ChangeOrigin?
                    if let face, let client, let method {
                        origin = ChangeOrigin(face: face, client: client, user: user, method: method)
                    }
                    records.append(
                        ChangeRecord(seq: UInt64(seq), entry: ChangeLogEntry(event: event, time: time, origin: origin)))
                }
                let bounds = try await bounds(folder: folder, on: connection, database: database)
                return (records, bounds ?? Bounds(latest: 0, oldest: 1))
            }
        }

        /// Deletes what retention no longer keeps: beyond the newest
        /// `maxRecords`, and the records older than `oldestKept` (up to the
        /// first younger one, so what is left has no gap); returns the bounds after.
        static func trim(
            folder: String, keepingNewest maxRecords: UInt64, youngerThan oldestKept: Int64, in database: Database
        )
            async throws(ChangeLogError) -> Bounds
        {
            let keep = Int64(clamping: maxRecords)
            return try await transaction(database, doing: "trim the change log") { connection in
                try await connection.query(
                    """
                    DELETE FROM change_log WHERE folder = \(folder) AND seq <= (
                        SELECT GREATEST(
                            f.last_seq - \(keep),
                            COALESCE(
                                (SELECT min(seq) - 1 FROM change_log WHERE folder = f.folder AND time_ns >= \(oldestKept)),
                                f.last_seq))
                        FROM change_log_folders f WHERE f.folder = \(folder))
                    """, logger: database.logger)
                return try await bounds(folder: folder, on: connection, database: database)
                    ?? Bounds(latest: 0, oldest: 1)
            }
        }

        /// PostgreSQL's text holds no NUL: one would stop the writer for good.
        static func storable(_ text: String) -> String {
            text.utf8.contains(0) ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
        }

        static func run<Result: Sendable>(
            _ database: Database, doing what: String, _ body: (PostgresConnection) async throws -> Result
        ) async throws(ChangeLogError) -> Result {
            do {
                return try await database.withConnection(doing: what, body)
            } catch {
                throw ChangeLogError(error)
            }
        }

        static func transaction<Result: Sendable>(
            _ database: Database, doing what: String, _ body: (PostgresConnection) async throws -> Result
        ) async throws(ChangeLogError) -> Result {
            do {
                return try await database.withTransaction(doing: what, body)
            } catch {
                throw ChangeLogError(error)
            }
        }
    }
}

extension ChangeLogError {
    /// A database failure as the log reports it.
    init(_ error: DatabaseError) {
        let code: Code
        switch error.code {
        case .unavailable: code = .unavailable
        case .closed: code = .closed
        default: code = .io
        }
        self.init(code: code, message: error.message)
    }
}
