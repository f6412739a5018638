package storbench.cassandra;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import org.apache.cassandra.auth.CassandraRoleManager;
import org.apache.cassandra.config.CassandraRelevantProperties;
import org.apache.cassandra.cql3.QueryProcessor;
import org.apache.cassandra.db.ConsistencyLevel;
import org.apache.cassandra.service.StorageService;
import org.mindrot.jbcrypt.BCrypt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cassandra's role manager without its well-known superuser: on a cluster with no role yet, the first
 * superuser is storbench's own, with the password only storbench knows, so {@code cassandra}/{@code cassandra}
 * never exists, not even for the seconds between the CQL port opening and storbench replacing it.
 *
 * <p>{@link CassandraRoleManager#setup()} hands the task that creates {@code cassandra} to
 * {@link #scheduleSetupTask}, which runs it (and runs it again while it fails) once reads are safe. This
 * class schedules its own task in its place: when the node was given {@value #ROLE_FILE} (a file of its
 * owner's alone holding "ROLE PASSWORD") and no role exists, it inserts ROLE as a superuser that can log in,
 * the password bcrypt-hashed as Cassandra hashes it, at the consistency and write time Cassandra uses for its
 * default role (QUORUM, timestamp 0: any later change wins). A node without the property (nodes 2..N, which
 * get the roles by replication) creates no role at all.
 */
public class StorbenchRoleManager extends CassandraRoleManager {
    public static final String ROLE_FILE = "storbench.cassandra.initial_role_file";
    private static final Logger logger = LoggerFactory.getLogger(StorbenchRoleManager.class);

    @Override
    protected void scheduleSetupTask(Callable<Void> task) {
        // also called again with our own task while it fails: always ours, never Cassandra's default role
        super.scheduleSetupTask(StorbenchRoleManager::setupInitialRole);
    }

    private static Void setupInitialRole() throws IOException {
        String file = System.getProperty(ROLE_FILE);
        if (file == null) {
            return null;
        }
        if (StorageService.instance.getTokenMetadata().sortedTokens().isEmpty()) {
            throw new IllegalStateException("no known tokens in ring yet");  // rescheduled, as Cassandra's own
        }
        if (!QueryProcessor.process("SELECT role FROM system_auth.roles LIMIT 1", ConsistencyLevel.QUORUM).isEmpty()) {
            return null;
        }
        String[] fields = Files.readString(Path.of(file), StandardCharsets.UTF_8).trim().split(" ", 2);
        if (fields.length != 2 || fields[0].isEmpty() || fields[1].isEmpty()) {
            throw new IllegalStateException(file + ": expected one line ROLE PASSWORD");
        }
        int rounds = CassandraRelevantProperties.AUTH_BCRYPT_GENSALT_LOG2_ROUNDS.getInt(10);  // Cassandra's own
        String hash = BCrypt.hashpw(fields[1], BCrypt.gensalt(rounds));
        QueryProcessor.process("INSERT INTO system_auth.roles (role, is_superuser, can_login, salted_hash) "
                               + "VALUES (?, true, true, ?) USING TIMESTAMP 0", ConsistencyLevel.QUORUM,
                               List.of(bytes(fields[0]), bytes(hash)));
        logger.info("Created storbench's superuser role '{}' (no default role)", fields[0]);
        return null;
    }

    private static ByteBuffer bytes(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }
}
