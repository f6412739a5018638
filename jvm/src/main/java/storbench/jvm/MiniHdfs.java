package storbench.jvm;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS (one NameNode, N DataNodes) on 127.0.0.1 with free ports, for storbench.
 *
 * Usage: MiniHdfs BASE_DIR DATANODES [NAMENODE_PORT]
 * Writes BASE_DIR/ready.json ({"uri": ..., "datanodes": N, "datanode_dirs": [...]}) once
 * the cluster is up, then runs until SIGTERM, when it shuts the cluster down cleanly.
 *
 * Permissions are checked. The user running this process is HDFS's superuser; with
 * -Dstorbench.hdfs.owner=NAME the root directory is given to NAME (mode 755), so clients
 * acting as NAME (HADOOP_USER_NAME) write the namespace and every other user only reads it.
 */
public final class MiniHdfs {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: MiniHdfs BASE_DIR DATANODES [NAMENODE_PORT]");
            System.exit(2);
        }
        File base = new File(args[0]).getAbsoluteFile();
        int datanodes = Integer.parseInt(args[1]);
        int nnPort = args.length > 2 ? Integer.parseInt(args[2]) : 0;

        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(base, "data").getPath());
        // Everything on loopback: the host name need not resolve.
        conf.set(DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY, "127.0.0.1:0");
        conf.set(DFSConfigKeys.DFS_DATANODE_HTTP_ADDRESS_KEY, "127.0.0.1:0");
        conf.set(DFSConfigKeys.DFS_DATANODE_IPC_ADDRESS_KEY, "127.0.0.1:0");
        conf.set(DFSConfigKeys.DFS_NAMENODE_HTTP_ADDRESS_KEY, "127.0.0.1:0");
        conf.setBoolean(DFSConfigKeys.DFS_PERMISSIONS_ENABLED_KEY, true);
        conf.set("fs.permissions.umask-mode", "022");  // what clients create: others read, never write
        conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, Math.min(3, datanodes));

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
                .numDataNodes(datanodes)
                .nameNodePort(nnPort)
                .format(true)
                .build();
        cluster.waitActive();
        String owner = System.getProperty("storbench.hdfs.owner");
        if (owner != null && !owner.isEmpty()) {
            FileSystem fs = cluster.getFileSystem();  // as the superuser: this process's user
            fs.setOwner(new org.apache.hadoop.fs.Path("/"), owner, owner);
            fs.setPermission(new org.apache.hadoop.fs.Path("/"), new FsPermission((short) 0755));
        }

        StringBuilder dirs = new StringBuilder();
        for (int i = 0; i < datanodes; i++) {
            for (int j = 0; j < 2; j++) {
                if (dirs.length() > 0) dirs.append(',');
                dirs.append('"').append(cluster.getInstanceStorageDir(i, j).getAbsolutePath()).append('"');
            }
        }
        String uri = "hdfs://127.0.0.1:" + cluster.getNameNodePort();
        String ready = "{\"uri\": \"" + uri + "\", \"datanodes\": " + datanodes
                + ", \"pid\": " + ProcessHandle.current().pid()
                + ", \"datanode_dirs\": [" + dirs + "]}\n";
        writeAtomically(base.toPath().resolve("ready.json"), ready);
        System.out.println(uri);
        System.out.flush();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cluster.shutdown();
            stopped.countDown();
        }));
        stopped.await();
    }

    private static void writeAtomically(Path path, String text) throws IOException {
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
