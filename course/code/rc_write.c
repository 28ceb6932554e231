// zh: rc_write.c：一次 RC RDMA WRITE，从打开设备到拆除，只用 verbs 和一条 TCP 连接。
// en: rc_write.c: one RC RDMA WRITE, from opening the device to teardown, with verbs and one TCP connection.
// zh: 客户端把一条消息直接写进服务端注册的缓冲区，服务端的 CPU 不参与数据传输。
// en: The client writes a message straight into a buffer the server registered; the server's CPU takes no part.
// zh: 服务端只在最后通过 TCP 得知“写完了”，然后打印缓冲区。
// en: The server only learns over TCP at the end that the write is done, and prints the buffer.
// playground: rc_write
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o rc_write rc_write.c -libverbs
// zh: 运行（先起服务端，客户端给出服务端的 IP）：
// en: Run (the server first; the client names the server's IP):
//   server$ ./rc_write [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU]
//   client$ ./rc_write [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU] SERVER_IP
// zh: 默认值：第一块 RDMA 设备，端口 1，TCP 端口 18515，path MTU 取端口的 active_mtu。
// en: Defaults: the first RDMA device, port 1, TCP port 18515, the port's active_mtu as path MTU.
// zh: 默认的 GID 下标是 GID 表里 RoCE v2、IPv4 映射地址的那一项。
// en: The default GID index is the table's RoCE v2 entry with an IPv4-mapped address.
// zh: 环境变量 RDMALAB_DEVICE、RDMALAB_GID_INDEX 可以代替 -d、-g。
// en: The environment variables RDMALAB_DEVICE and RDMALAB_GID_INDEX may stand in for -d and -g.
// zh: 两端的 path MTU 必须一致；两边端口的 MTU 不同时，两端都用 -m 指定较小的那个。
// en: Both ends must use the same path MTU; if the ports differ, give both the smaller one with -m.
// zh: 遇到致命错误程序直接退出：进程退出时内核会回收它的全部 verbs 资源。
// en: On a fatal error the program simply exits: the kernel frees a dead process's verbs resources.

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#define BUF_SIZE 4096
#define CQ_DEPTH 16
#define WRITE_WR_ID 1
#define INFO_LEN 34 // QPN 3 + PSN 3 + GID 16 + rkey 4 + addr 8

static const char MESSAGE[] = "hello from rc_write: these bytes went by RDMA WRITE";

// zh: 返回 NULL 或 -1 并设置 errno 的调用用这个报错。
// en: For calls that return NULL or -1 and set errno.
static void fail_errno(const char *call)
{
    fprintf(stderr, "%s failed: %s (errno %d)\n", call, strerror(errno), errno);
    exit(1);
}

// zh: ibv_modify_qp、ibv_post_send 等直接返回 errno 的值（不是 -1），用这个报错。
// en: ibv_modify_qp, ibv_post_send and others return the errno value itself (not -1).
static void fail_ret(const char *call, int ret)
{
    fprintf(stderr, "%s failed: %s (%d)\n", call, strerror(ret), ret);
    exit(1);
}

// zh: dev_name 为 NULL 表示第一块设备，gid_index 为 -1 表示查表，mtu 为 0 表示用 active_mtu。
// en: dev_name NULL means the first device, gid_index -1 means search the table, mtu 0 means active_mtu.
// zh: server 为 NULL 表示本端是服务端。
// en: server NULL means this side is the server.
struct options {
    const char *dev_name;
    uint8_t ib_port;
    int gid_index;
    const char *tcp_port;
    enum ibv_mtu mtu;
    const char *server;
};

static enum ibv_mtu mtu_from_bytes(int bytes)
{
    switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    }
    fprintf(stderr, "-m takes 256, 512, 1024, 2048 or 4096\n");
    exit(2);
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = { .dev_name = getenv("RDMALAB_DEVICE"), .ib_port = 1,
                         .gid_index = -1, .tcp_port = "18515" };
    const char *gid_env = getenv("RDMALAB_GID_INDEX");
    if (gid_env)
        o.gid_index = atoi(gid_env);
    int c;
    while ((c = getopt(argc, argv, "d:i:g:p:m:")) != -1) {
        switch (c) {
        case 'd': o.dev_name = optarg; break;
        case 'i': o.ib_port = (uint8_t)atoi(optarg); break;
        case 'g': o.gid_index = atoi(optarg); break;
        case 'p': o.tcp_port = optarg; break;
        case 'm': o.mtu = mtu_from_bytes(atoi(optarg)); break;
        default:
            fprintf(stderr, "usage: %s [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT]"
                            " [-m MTU] [SERVER_IP]\n", argv[0]);
            exit(2);
        }
    }
    if (optind < argc)
        o.server = argv[optind];
    return o;
}

// zh: 在 GID 表里找 RoCE v2 且 IPv4 映射（::ffff:a.b.c.d）的一项；不要假定下标固定是 3。
// en: Find the RoCE v2, IPv4-mapped (::ffff:a.b.c.d) entry; do not assume it is index 3.
static int find_roce_v2_gid(struct ibv_context *ctx, uint8_t port, int tbl_len)
{
    static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry e;
        int ret = ibv_query_gid_ex(ctx, port, i, &e, 0);
        // zh: ENODATA 表示表里这一格是空的。
        // en: ENODATA means this slot of the table is empty.
        if (ret == ENODATA)
            continue;
        if (ret)
            fail_ret("ibv_query_gid_ex", ret);
        if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && memcmp(e.gid.raw, v4_mapped, 12) == 0)
            return i;
    }
    fprintf(stderr, "no RoCE v2 IPv4-mapped GID on port %u; pass -g INDEX\n", port);
    exit(1);
}

// zh: 带外通道：服务端在 TCP 端口上等一个客户端，客户端连过去。
// en: The out-of-band channel: the server waits for one client on a TCP port.
static int oob_connect(const char *server, const char *port)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res;
    if (!server)
        hints.ai_flags = AI_PASSIVE;
    int gai = getaddrinfo(server, port, &hints, &res);
    if (gai) {
        fprintf(stderr, "getaddrinfo(%s): %s\n", server ? server : "*", gai_strerror(gai));
        exit(1);
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        if (server ? connect(fd, ai->ai_addr, ai->ai_addrlen) == 0
                   : setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
                     bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        fail_errno(server ? "connect" : "bind/listen");
    if (server)
        return fd;
    printf("waiting for a client on TCP port %s\n", port);
    int conn = accept(fd, NULL, NULL);
    if (conn < 0)
        fail_errno("accept");
    close(fd);
    return conn;
}

static void write_full(int fd, const void *buf, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, (const char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fail_errno("write");
        done += (size_t)n;
    }
}

// zh: 按大端（网络字节序）写入/读出 n 个字节的无符号整数；QPN 和 PSN 各只占 3 字节。
// en: Store/load an n-byte unsigned integer big-endian (network order); QPN and PSN take 3.
static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

struct conn_info {
    uint32_t qpn;       // 24 bit
    uint32_t psn;       // 24 bit
    union ibv_gid gid;
    uint32_t rkey;
    uint64_t addr;
};

// region: exchange
// zh: 线上格式和仿真器一样，共 34 字节：QPN 3、PSN 3、GID 16、rkey 4、地址 8，全部网络字节序。
// en: The wire format is the simulator's, 34 bytes: QPN 3, PSN 3, GID 16, rkey 4, address 8, all in network byte order.
static void exchange(int sock, const struct conn_info *me, struct conn_info *peer)
{
    uint8_t out[INFO_LEN], in[INFO_LEN];
    put_be(out + 0, me->qpn, 3);
    put_be(out + 3, me->psn, 3);
    memcpy(out + 6, me->gid.raw, 16);
    put_be(out + 22, me->rkey, 4);
    put_be(out + 26, me->addr, 8);
    write_full(sock, out, sizeof out);

    // zh: TCP 是字节流，一次 read 可能只拿到一部分：循环直到读满整个结构。
    // en: TCP is a byte stream and one read may return only part: loop until all of it is in.
    for (size_t got = 0; got < sizeof in;) {
        ssize_t n = read(sock, in + got, sizeof in - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "exchange: %s\n", n ? strerror(errno) : "peer closed the connection");
            exit(1);
        }
        got += (size_t)n;
    }
    // zh: 读到的值原样交给 RTR：本地无从核实它们是否属实。
    // en: The values go to RTR as they are: locally there is no way to check them.
    peer->qpn = (uint32_t)get_be(in + 0, 3);
    peer->psn = (uint32_t)get_be(in + 3, 3);
    memcpy(peer->gid.raw, in + 6, 16);
    peer->rkey = (uint32_t)get_be(in + 22, 4);
    peer->addr = get_be(in + 26, 8);
}
// endregion: exchange

// zh: 在 TCP 上互发一个字节，作为两端都到达某一步的同步点。
// en: Swap one byte over TCP: a point both sides know the other has reached.
static void sync_peer(int sock, char tag)
{
    char got;
    write_full(sock, &tag, 1);
    if (read(sock, &got, 1) != 1 || got != tag) {
        fprintf(stderr, "sync '%c': the peer went away\n", tag);
        exit(1);
    }
}

static void print_gid(const char *who, const union ibv_gid *gid, uint32_t qpn, uint32_t psn)
{
    char text[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gid->raw, text, sizeof text);
    printf("%s: QPN 0x%06x, PSN 0x%06x, GID %s\n", who, qpn, psn, text);
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    int is_server = (o.server == NULL);
    int ret;

// region: open
    int num_devices;
    struct ibv_device **list = ibv_get_device_list(&num_devices);
    if (!list)
        fail_errno("ibv_get_device_list");
    struct ibv_device *dev = NULL;
    for (int i = 0; i < num_devices && !dev; i++)
        if (!o.dev_name || strcmp(ibv_get_device_name(list[i]), o.dev_name) == 0)
            dev = list[i];
    if (!dev) {
        fprintf(stderr, "RDMA device %s not found\n", o.dev_name ? o.dev_name : "(any)");
        return 1;
    }
    // zh: 打开设备时，provider 向内核要设备上下文，并把门铃页映射进本进程。
    // en: Opening the device: the provider gets a context from the kernel and maps the doorbell pages.
    struct ibv_context *ctx = ibv_open_device(dev);
    if (!ctx)
        fail_errno("ibv_open_device");
    // zh: 设备打开后即可释放列表；此后只有已打开的设备还能用。
    // en: Once the device is open the list may go; only opened devices stay usable.
    ibv_free_device_list(list);

    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd)
        fail_errno("ibv_alloc_pd");
// endregion: open

    // zh: 端口要是活动的 RoCE 端口；本端 GID 之后在交换时交给远端。
    // en: The port must be an active RoCE port; our GID goes to the peer in the exchange.
    struct ibv_port_attr port;
    if ((ret = ibv_query_port(ctx, o.ib_port, &port)))
        fail_ret("ibv_query_port", ret);
    if (port.state != IBV_PORT_ACTIVE || port.link_layer != IBV_LINK_LAYER_ETHERNET) {
        fprintf(stderr, "port %u is not an active RoCE port\n", o.ib_port);
        return 1;
    }
    int gid_index = o.gid_index >= 0 ? o.gid_index
                                     : find_roce_v2_gid(ctx, o.ib_port, port.gid_tbl_len);
    union ibv_gid my_gid;
    static const union ibv_gid zero_gid;
    // zh: ibv_query_gid 对空的表项也返回 0，只是 GID 全为 0：要自己检查。
    // en: ibv_query_gid returns 0 for an empty entry too, with an all-zero GID: check for it.
    if (ibv_query_gid(ctx, o.ib_port, gid_index, &my_gid) ||
        memcmp(&my_gid, &zero_gid, sizeof my_gid) == 0) {
        fprintf(stderr, "no GID at index %d of port %u\n", gid_index, o.ib_port);
        return 1;
    }

// region: register
    char *buf = aligned_alloc(4096, BUF_SIZE);
    if (!buf)
        fail_errno("aligned_alloc");
    memset(buf, 0, BUF_SIZE);
    if (!is_server)
        memcpy(buf, MESSAGE, sizeof MESSAGE);
    // zh: 被写的一端（服务端）要 REMOTE_WRITE，而 REMOTE_WRITE 要求同时给 LOCAL_WRITE。
    // en: The side written to (the server) needs REMOTE_WRITE, which requires LOCAL_WRITE too.
    // zh: 只发数据的一端不要任何写权限：它的网卡只读这块内存（本地读权限总是有的）。
    // en: The side that only sends needs no write access: its NIC only reads (local read is implied).
    int access = is_server ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : 0;
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_SIZE, access);
    if (!mr)
        fail_errno("ibv_reg_mr");
    // zh: lkey 用在本地 SGE 里；rkey 和缓冲区地址在交换时交给远端。
    // en: The lkey goes into local SGEs; the rkey and the address go to the peer in the exchange.
    printf("MR: addr %p, lkey 0x%x, rkey 0x%x\n", (void *)buf, mr->lkey, mr->rkey);
// endregion: register

// region: cq_qp
    // zh: CQ 的大小只是下限，驱动可能给得更多：以返回的 cq->cqe 为准。
    // en: The CQ size is a minimum and the driver may give more: cq->cqe is what counts.
    struct ibv_cq *cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
    if (!cq)
        fail_errno("ibv_create_cq");

    struct ibv_qp_init_attr qp_init = {
        // zh: 发送完成和接收完成分别写到哪个 CQ；这里共用一个。
        // en: Which CQ the send and the receive completions go to; here they share one.
        .send_cq = cq,
        .recv_cq = cq,
        .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
        .qp_type = IBV_QPT_RC,
        // zh: sq_sig_all = 0：只有带 IBV_SEND_SIGNALED 的发送请求才产生完成。
        // en: sq_sig_all = 0: only send WRs with IBV_SEND_SIGNALED produce a completion.
        .sq_sig_all = 0,
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &qp_init);
    if (!qp)
        fail_errno("ibv_create_qp");
    // zh: 新 QP 处于 RESET，已经有了 24 位的 QPN；cap 已被改写成实际容量。
    // en: The new QP is in RESET and already has its 24-bit QPN; cap now holds the real capacities.
    printf("CQ: %d entries; QP 0x%06x: max_send_wr %u, max_recv_wr %u, max_inline_data %u\n",
           cq->cqe, qp->qp_num, qp_init.cap.max_send_wr, qp_init.cap.max_recv_wr,
           qp_init.cap.max_inline_data);
// endregion: cq_qp

// region: init
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_INIT,
        // zh: RoCE 上 P_Key 表通常只用第 0 项。
        // en: On RoCE the P_Key table normally has only entry 0 in use.
        .pkey_index = 0,
        .port_num = o.ib_port,
        // zh: QP 的访问权限是第一道门，MR 的是第二道：被写的一端两道都要打开。
        // en: The QP's access flags are the first gate, the MR's the second: the target opens both.
        .qp_access_flags = is_server ? IBV_ACCESS_REMOTE_WRITE : 0,
    };
    ret = ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    // zh: 失败时返回 errno 的值本身（例如 22，即 EINVAL），而且什么都没改。
    // en: On failure it returns the errno value itself (22 is EINVAL) and changes nothing.
    if (ret)
        fail_ret("ibv_modify_qp(RESET->INIT)", ret);
// endregion: init

    // zh: 起始 PSN 随机取一个 24 位的值，新连接就不会收下旧连接残留的包。
    // en: A random 24-bit starting PSN, so a new connection accepts no leftovers of an old one.
    uint32_t my_psn;
    if (getrandom(&my_psn, sizeof my_psn, 0) != sizeof my_psn)
        fail_errno("getrandom");
    my_psn &= 0xffffff;

    struct conn_info me = { .qpn = qp->qp_num, .psn = my_psn, .gid = my_gid,
                            .rkey = mr->rkey, .addr = (uintptr_t)buf };
    struct conn_info peer;
    int sock = oob_connect(o.server, o.tcp_port);
    exchange(sock, &me, &peer);
    print_gid("local ", &me.gid, me.qpn, me.psn);
    print_gid("remote", &peer.gid, peer.qpn, peer.psn);

// region: rtr
    memset(&attr, 0, sizeof attr);
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = o.mtu ? o.mtu : port.active_mtu;
    // zh: 下面三个值来自远端：它的 QPN、它的起始 PSN（作为本端的 rq_psn）、它的 GID。
    // en: These three come from the peer: its QPN, its starting PSN (our rq_psn), its GID.
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.ah_attr.grh.dgid = peer.gid;
    // zh: RoCE 必须走全局路由：is_global = 1，带 GRH。sgid_index 选本端 GID 表的一项，也就决定了包走 RoCE v2 over IPv4。
    // en: RoCE must use global routing: is_global = 1 with a GRH. sgid_index picks our GID entry, and so makes the packets RoCE v2 over IPv4.
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.sgid_index = (uint8_t)gid_index;
    // zh: hop_limit 就是 RoCEv2 包 IP 头里的 TTL。
    // en: hop_limit is the TTL in the IP header of RoCEv2 packets.
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.port_num = o.ib_port;
    // zh: 作为响应方同时服务多少个远端的 READ/原子操作；本程序只有 WRITE，所以是 0。
    // en: How many of the peer's READs/atomics we serve at once; this program only WRITEs: 0.
    attr.max_dest_rd_atomic = 0;
    // zh: 本端发出的 RNR NAK 让远端至少等多久；12 表示 0.64 ms。
    // en: How long an RNR NAK from us tells the peer to wait at least; 12 means 0.64 ms.
    attr.min_rnr_timer = 12;
    ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (ret)
        fail_ret("ibv_modify_qp(INIT->RTR)", ret);
// endregion: rtr

// region: rts
    memset(&attr, 0, sizeof attr);
    attr.qp_state = IBV_QPS_RTS;
    // zh: 本地 ACK 超时为 4.096 µs × 2^timeout，14 约为 67 ms；超时后最多重发 retry_cnt 次。
    // en: The local ACK timeout is 4.096 µs × 2^timeout, 14 is about 67 ms; retry_cnt resends after it.
    attr.timeout = 14;
    attr.retry_cnt = 7;
    // zh: 收到 RNR NAK 后的重试次数；7 表示无限重试。
    // en: Retries after an RNR NAK; 7 means retry forever.
    attr.rnr_retry = 7;
    // zh: sq_psn 必须正好是交换时告诉远端的那个值（远端把它设成 rq_psn）。
    // en: sq_psn must be exactly the value told to the peer (its rq_psn).
    attr.sq_psn = my_psn;
    // zh: 作为请求方最多同时有几个 READ/原子操作未完成；本程序没有。
    // en: How many READs/atomics we may have outstanding as requester; this program has none.
    attr.max_rd_atomic = 0;
    ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                       IBV_QP_MAX_QP_RD_ATOMIC);
    if (ret)
        fail_ret("ibv_modify_qp(RTR->RTS)", ret);
    // zh: 发第一个请求前要确认远端至少已到 RTR：处于 INIT 的 QP 会默默丢掉请求包。
    // en: Before the first request, make sure the peer is at least in RTR: a QP in INIT silently drops requests.
    // zh: 否则本端要等一个 ACK 超时（约 67 ms）才会重发；所以在 TCP 上再交换一次“就绪”。
    // en: We would then resend only after an ACK timeout (~67 ms); so swap one more "ready" over TCP.
    sync_peer(sock, 'R');
// endregion: rts

    if (!is_server) {
// region: post_write
        // zh: SGE 描述本地数据：地址、长度，以及它所在 MR 的 lkey。
        // en: The SGE describes the local data: address, length and the lkey of its MR.
        struct ibv_sge sge = {
            .addr = (uintptr_t)buf,
            .length = sizeof MESSAGE,
            .lkey = mr->lkey,
        };
        // zh: wr_id 由程序自选，原样出现在完成里；远端地址和 rkey 来自交换。
        // en: wr_id is ours to choose and comes back in the completion; the remote address and rkey come from the exchange.
        struct ibv_send_wr wr = {
            .wr_id = WRITE_WR_ID,
            .sg_list = &sge,
            .num_sge = 1,
            .opcode = IBV_WR_RDMA_WRITE,
            .send_flags = IBV_SEND_SIGNALED,
            .wr.rdma.remote_addr = peer.addr,
            .wr.rdma.rkey = peer.rkey,
        };
        struct ibv_send_wr *bad_wr = NULL;
        // zh: 返回 0 只说明 WR 已进入发送队列；rkey 错了之类的问题只会出现在完成里。
        // en: 0 only means the WR is queued; a wrong rkey and the like show up only in the completion.
        if ((ret = ibv_post_send(qp, &wr, &bad_wr)))
            fail_ret("ibv_post_send", ret);
// endregion: post_write

// region: poll
        struct ibv_wc wc;
        int n;
        // zh: 忙轮询：一直转到完成出现为止，代价是占满一个核。
        // en: Busy polling: spin until the completion appears, at the price of a core.
        do {
            n = ibv_poll_cq(cq, 1, &wc);
        } while (n == 0);
        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq failed\n");
            return 1;
        }
        // zh: 先看 status；出错时只有 wr_id、status、qp_num、vendor_err 可信。
        // en: Check status first; on an error only wr_id, status, qp_num and vendor_err are valid.
        if (wc.status != IBV_WC_SUCCESS) {
            fprintf(stderr, "WR %" PRIu64 " failed: %s (vendor_err 0x%x)\n", wc.wr_id,
                    ibv_wc_status_str(wc.status), wc.vendor_err);
            return 1;
        }
        // zh: 到这里远端网卡已确认收下数据，本地缓冲区才可以再写。
        // en: Only now has the remote NIC acknowledged the data, and may the buffer be rewritten.
        printf("RDMA WRITE of %zu bytes completed\n", sizeof MESSAGE);
// endregion: poll
    }

    // zh: 服务端不知道数据何时到达：客户端拿到完成之后，在 TCP 上告诉它。
    // en: The server cannot tell when the data has landed: the client tells it over TCP after its completion.
    // zh: 真正的协议会用 WRITE_WITH_IMM（见 read_atomic.c）：那个通知不可能赶在数据前面。
    // en: A real protocol would use WRITE_WITH_IMM (see read_atomic.c): that notice cannot overtake the data.
    sync_peer(sock, 'D');
    if (is_server)
        printf("buffer now holds: \"%.*s\"\n", BUF_SIZE, buf);
    close(sock);

// region: cleanup
    // zh: 按创建的反顺序拆除。这里没有未完成的 WR，QP 可以直接销毁（有的话见 teardown.c）。
    // en: Tear down in reverse order of creation. No WR is outstanding, so the QP can go directly (teardown.c shows the other case).
    // zh: QP 引用着 CQ 和 PD，先销毁它；CQ 还被 QP 使用时销毁会失败（EBUSY）。
    // en: The QP refers to the CQ and the PD, so it goes first; a CQ still used by a QP fails with EBUSY.
    if ((ret = ibv_destroy_qp(qp)))
        fail_ret("ibv_destroy_qp", ret);
    if ((ret = ibv_destroy_cq(cq)))
        fail_ret("ibv_destroy_cq", ret);
    if ((ret = ibv_dereg_mr(mr)))
        fail_ret("ibv_dereg_mr", ret);
    // zh: 注销之后才能释放内存：注册期间页面被钉住，网卡随时可能访问它。
    // en: Free the memory only after deregistering: while registered it is pinned and the NIC may touch it.
    free(buf);
    // zh: PD 里还有 MR 或 QP 时释放会失败（EBUSY）。
    // en: A PD that still holds MRs or QPs fails to deallocate (EBUSY).
    if ((ret = ibv_dealloc_pd(pd)))
        fail_ret("ibv_dealloc_pd", ret);
    // zh: 关闭设备不会替你释放它下面的资源，所以要最后做。
    // en: Closing the device does not free the resources under it for you, so it comes last.
    if (ibv_close_device(ctx))
        fail_errno("ibv_close_device");
// endregion: cleanup
    return 0;
}
