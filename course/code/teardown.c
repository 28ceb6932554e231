// zh: teardown.c：一条 RC 连接的正确拆除：道别、改 ERR、排空、再按依赖的反方向销毁。
// en: teardown.c: tearing an RC connection down properly: say goodbye, move to ERR, drain, then destroy in reverse order of dependency.
// zh: 两端各挂 4 个接收 WR；客户端发 2 条 SEND，用掉服务端的 2 个。道别时客户端还有 4 个、服务端还有 2 个接收 WR 没完成。
// en: Each side posts 4 receive WRs; the client sends 2 SENDs, using up 2 of the server's. At goodbye the client has 4 and the server 2 receive WRs outstanding.
// zh: 改到 ERR 之后，它们都以 IBV_WC_WR_FLUSH_ERR 回来；每一个都对上账之后才销毁 QP。
// en: After the move to ERR they all come back as IBV_WC_WR_FLUSH_ERR; only once each is accounted for is the QP destroyed.
// playground: teardown
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o teardown teardown.c -libverbs
// zh: 运行（先起服务端，客户端给出服务端的 IP）：
// en: Run (the server first; the client names the server's IP):
//   server$ ./teardown [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU]
//   client$ ./teardown [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU] SERVER_IP
// zh: 默认值和环境变量与 rc_write.c 相同：第一块设备、端口 1、RoCE v2 IPv4 映射的 GID、TCP 端口 18515。
// en: Defaults and environment variables as in rc_write.c: the first device, port 1, the RoCE v2 IPv4-mapped GID, TCP port 18515.
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
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

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

// zh: 出错的完成里只有 wr_id、status、qp_num、vendor_err 可信。
// en: In an error completion only wr_id, status, qp_num and vendor_err are valid.
static void fail_wc(const struct ibv_wc *wc)
{
    fprintf(stderr, "WR %" PRIu64 " on QP 0x%06x failed: %s (vendor_err 0x%x)\n", wc->wr_id,
            wc->qp_num, ibv_wc_status_str(wc->status), wc->vendor_err);
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

// zh: 打开设备（按名字或第一块）、检查端口、选出并读取本端 GID；rc_write.c 里有逐步的讲解。
// en: Open the device (by name or the first one), check the port, pick and read our GID; rc_write.c explains each step.
static struct ibv_context *open_device(const struct options *o, struct ibv_port_attr *port,
                                       int *gid_index, union ibv_gid *gid)
{
    int num;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (!list)
        fail_errno("ibv_get_device_list");
    struct ibv_device *dev = NULL;
    for (int i = 0; i < num && !dev; i++)
        if (!o->dev_name || strcmp(ibv_get_device_name(list[i]), o->dev_name) == 0)
            dev = list[i];
    if (!dev) {
        fprintf(stderr, "RDMA device %s not found\n", o->dev_name ? o->dev_name : "(any)");
        exit(1);
    }
    struct ibv_context *ctx = ibv_open_device(dev);
    if (!ctx)
        fail_errno("ibv_open_device");
    ibv_free_device_list(list);

    int ret = ibv_query_port(ctx, o->ib_port, port);
    if (ret)
        fail_ret("ibv_query_port", ret);
    if (port->state != IBV_PORT_ACTIVE || port->link_layer != IBV_LINK_LAYER_ETHERNET) {
        fprintf(stderr, "port %u is not an active RoCE port\n", o->ib_port);
        exit(1);
    }
    *gid_index = o->gid_index >= 0 ? o->gid_index
                                   : find_roce_v2_gid(ctx, o->ib_port, port->gid_tbl_len);
    // zh: ibv_query_gid 对空的表项也返回 0，只是 GID 全为 0：要自己检查。
    // en: ibv_query_gid returns 0 for an empty entry too, with an all-zero GID: check for it.
    static const union ibv_gid zero_gid;
    if (ibv_query_gid(ctx, o->ib_port, *gid_index, gid) ||
        memcmp(gid, &zero_gid, sizeof *gid) == 0) {
        fprintf(stderr, "no GID at index %d of port %u\n", *gid_index, o->ib_port);
        exit(1);
    }
    return ctx;
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

// zh: TCP 是字节流：循环读，直到读满 len 个字节。
// en: TCP is a byte stream: loop until all len bytes are in.
static void read_full(int fd, void *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "read: %s\n", n ? strerror(errno) : "peer closed the connection");
            exit(1);
        }
        got += (size_t)n;
    }
}

// zh: 按大端（网络字节序）写入/读出 n 个字节的无符号整数。
// en: Store/load an n-byte unsigned integer big-endian (network byte order).
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

// zh: 在 TCP 上互发一个字节，作为两端都到达某一步的同步点。
// en: Swap one byte over TCP: a point both sides know the other has reached.
static void sync_peer(int sock, char tag)
{
    char got;
    write_full(sock, &tag, 1);
    read_full(sock, &got, 1);
    if (got != tag) {
        fprintf(stderr, "sync: expected '%c', got '%c'\n", tag, got);
        exit(1);
    }
}

static uint32_t random_psn(void)
{
    uint32_t psn;
    if (getrandom(&psn, sizeof psn, 0) != sizeof psn)
        fail_errno("getrandom");
    return psn & 0xffffff;
}

struct conn_info {
    uint32_t qpn;       // 24 bit
    uint32_t psn;       // 24 bit
    union ibv_gid gid;
    uint32_t rkey;
    uint64_t addr;
};

// zh: 与 rc_write.c 相同的 34 字节交换：QPN 3、PSN 3、GID 16、rkey 4、地址 8，全部网络字节序。
// en: The same 34-byte exchange as rc_write.c: QPN 3, PSN 3, GID 16, rkey 4, address 8, all network byte order.
static void exchange(int sock, const struct conn_info *me, struct conn_info *peer)
{
    uint8_t out[34], in[34];
    put_be(out + 0, me->qpn, 3);
    put_be(out + 3, me->psn, 3);
    memcpy(out + 6, me->gid.raw, 16);
    put_be(out + 22, me->rkey, 4);
    put_be(out + 26, me->addr, 8);
    write_full(sock, out, sizeof out);
    read_full(sock, in, sizeof in);
    peer->qpn = (uint32_t)get_be(in + 0, 3);
    peer->psn = (uint32_t)get_be(in + 3, 3);
    memcpy(peer->gid.raw, in + 6, 16);
    peer->rkey = (uint32_t)get_be(in + 22, 4);
    peer->addr = get_be(in + 26, 8);
}

// zh: 三次状态迁移的属性和掩码与 rc_write.c 相同，各项的含义见那里。
// en: The three transitions use the same attributes and masks as rc_write.c, which explains each one.
static void qp_to_init(struct ibv_qp *qp, uint8_t port, unsigned int access)
{
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port,
                                .qp_access_flags = access };
    int ret = ibv_modify_qp(qp, &attr,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (ret)
        fail_ret("ibv_modify_qp(RESET->INIT)", ret);
}

static void qp_to_rtr(struct ibv_qp *qp, uint8_t port, int gid_index, enum ibv_mtu mtu,
                      const struct conn_info *peer, uint8_t max_dest_rd_atomic)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = mtu,
        .dest_qp_num = peer->qpn,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = max_dest_rd_atomic,
        .min_rnr_timer = 12,
        .ah_attr = { .is_global = 1, .port_num = port,
                     .grh = { .dgid = peer->gid, .sgid_index = (uint8_t)gid_index,
                              .hop_limit = 64 } },
    };
    int ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (ret)
        fail_ret("ibv_modify_qp(INIT->RTR)", ret);
}

static void qp_to_rts(struct ibv_qp *qp, uint32_t my_psn, uint8_t max_rd_atomic)
{
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
                                .rnr_retry = 7, .sq_psn = my_psn,
                                .max_rd_atomic = max_rd_atomic };
    int ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                           IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                           IBV_QP_MAX_QP_RD_ATOMIC);
    if (ret)
        fail_ret("ibv_modify_qp(RTR->RTS)", ret);
}

#define RECV_DEPTH 4
#define SLOT_SIZE 256
#define MESSAGES 2
#define CQ_DEPTH 16
#define DRAIN_TIMEOUT_MS 2000

// zh: wr_id 编码了 WR 的种类：出错（包括被刷新）的完成里 opcode 不可信，只能靠 wr_id 区分。
// en: wr_id encodes the kind of WR: an error (or flushed) completion has no valid opcode, so wr_id is all there is.
#define RECV_BASE 100
#define SEND_BASE 200

// zh: 账本：投递过多少、完成了多少。两者之差就是还挂在队列里的 WR。
// en: The books: how many were posted and how many completed. The difference is what is still queued.
struct books {
    int sends_posted, sends_done, recvs_posted, recvs_done;
};

static void post_recv_slot(struct ibv_qp *qp, struct ibv_mr *mr, char *buf, int slot,
                           struct books *b)
{
    struct ibv_sge sge = { .addr = (uintptr_t)(buf + slot * SLOT_SIZE), .length = SLOT_SIZE,
                           .lkey = mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = RECV_BASE + (uint64_t)slot, .sg_list = &sge, .num_sge = 1 };
    struct ibv_recv_wr *bad_wr;
    int ret = ibv_post_recv(qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_recv", ret);
    b->recvs_posted++;
}

static void post_send_msg(struct ibv_qp *qp, struct ibv_mr *mr, char *buf, int n,
                          struct books *b)
{
    char *slot = buf + RECV_DEPTH * SLOT_SIZE;
    int len = snprintf(slot, SLOT_SIZE, "message %d", n) + 1;
    struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = (uint32_t)len, .lkey = mr->lkey };
    struct ibv_send_wr wr = { .wr_id = SEND_BASE + (uint64_t)n, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
    struct ibv_send_wr *bad_wr;
    int ret = ibv_post_send(qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_send", ret);
    b->sends_posted++;
}

// zh: 记一条完成的账。出错的完成只看 wr_id 和 status。
// en: Account for one completion. For an error completion look only at wr_id and status.
static void account(const struct ibv_wc *wc, struct books *b, int *flushed)
{
    if (wc->wr_id >= SEND_BASE)
        b->sends_done++;
    else
        b->recvs_done++;
    if (wc->status == IBV_WC_WR_FLUSH_ERR)
        (*flushed)++;
    else if (wc->status != IBV_WC_SUCCESS)
        printf("WR %" PRIu64 ": %s (vendor_err 0x%x)\n", wc->wr_id,
               ibv_wc_status_str(wc->status), wc->vendor_err);
}

// zh: 连接正常时用：忙轮询，直到 *counter 达到 target。
// en: For the live connection: busy-poll until *counter reaches target.
static void poll_until(struct ibv_cq *cq, const char *buf, struct books *b, const int *counter,
                       int target)
{
    int flushed = 0;
    while (*counter < target) {
        struct ibv_wc wc;
        int n = ibv_poll_cq(cq, 1, &wc);
        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq failed\n");
            exit(1);
        }
        if (n == 0)
            continue;
        if (wc.status != IBV_WC_SUCCESS)
            fail_wc(&wc);
        account(&wc, b, &flushed);
        if (wc.wr_id < SEND_BASE)
            printf("received \"%.*s\"\n", (int)wc.byte_len,
                   buf + (wc.wr_id - RECV_BASE) * SLOT_SIZE);
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    int is_server = (o.server == NULL);
    struct books b = { 0 };
    struct ibv_port_attr port;
    int gid_index, ret;
    union ibv_gid my_gid;

    // zh: 创建的顺序：设备 → PD → CQ → QP → MR。QP 依赖 CQ 和 PD，MR 依赖 PD；销毁时沿这些依赖反过来走。
    // en: Creation order: device → PD → CQ → QP → MR. The QP depends on the CQ and the PD, the MR on the PD; destruction walks these dependencies backwards.
    struct ibv_context *ctx = open_device(&o, &port, &gid_index, &my_gid);
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd)
        fail_errno("ibv_alloc_pd");
    struct ibv_cq *cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
    if (!cq)
        fail_errno("ibv_create_cq");
    struct ibv_qp_init_attr qp_init = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 4, .max_recv_wr = RECV_DEPTH, .max_send_sge = 1,
                 .max_recv_sge = 1 },
    };
    struct ibv_qp *qp = ibv_create_qp(pd, &qp_init);
    if (!qp)
        fail_errno("ibv_create_qp");

    qp_to_init(qp, o.ib_port, 0);
    size_t buf_size = (RECV_DEPTH + 1) * SLOT_SIZE;
    char *buf = calloc(1, buf_size);
    if (!buf)
        fail_errno("calloc");
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, buf_size, IBV_ACCESS_LOCAL_WRITE);
    if (!mr)
        fail_errno("ibv_reg_mr");
    for (int i = 0; i < RECV_DEPTH; i++)
        post_recv_slot(qp, mr, buf, i, &b);
    uint32_t my_psn = random_psn();
    struct conn_info me = { .qpn = qp->qp_num, .psn = my_psn, .gid = my_gid,
                            .rkey = mr->rkey, .addr = (uintptr_t)buf };
    struct conn_info peer;
    int sock = oob_connect(o.server, o.tcp_port);
    exchange(sock, &me, &peer);
    qp_to_rtr(qp, o.ib_port, gid_index, o.mtu ? o.mtu : port.active_mtu, &peer, 0);
    qp_to_rts(qp, my_psn, 0);
    sync_peer(sock, 'R');

    if (is_server) {
        poll_until(cq, buf, &b, &b.recvs_done, MESSAGES);
    } else {
        for (int i = 0; i < MESSAGES; i++)
            post_send_msg(qp, mr, buf, i, &b);
        poll_until(cq, buf, &b, &b.sends_done, MESSAGES);
    }
    printf("before ERR: %d send and %d receive WRs outstanding\n",
           b.sends_posted - b.sends_done, b.recvs_posted - b.recvs_done);

    // zh: 改 ERR 不会发出任何包，远端不会知道；所以先在 TCP 上约定“再见”，双方都收到后再各自拆。
    // en: Moving to ERR sends no packet and the peer would never know; so agree on goodbye over TCP first, then each side tears down.
    sync_peer(sock, 'B');
    close(sock);

// region: err
    // zh: 掩码只有 IBV_QP_STATE；INIT 及之后的任何状态都能直接改到 ERR（RESET 不行）。
    // en: The mask is IBV_QP_STATE alone; any state from INIT on may move straight to ERR (RESET may not).
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
    if ((ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE)))
        fail_ret("ibv_modify_qp(ERR)", ret);
    // zh: 从这一刻起，队列里的每个 WR 都会产生一条完成，被刷新的状态是 IBV_WC_WR_FLUSH_ERR；之后再投递的 WR 也会被接受并立即刷新。
    // en: From now on every WR in the queues produces a completion, flushed ones with IBV_WC_WR_FLUSH_ERR; WRs posted later are accepted and flushed at once.
    // zh: 不要直接改到 RESET：那会清空队列，却不产生任何完成。
    // en: Do not go to RESET instead: it empties the queues without producing any completion.
// endregion: err

// region: drain
    // zh: 排空：一直 poll，直到每个投递过、尚未完成的 WR 都拿回了完成。
    // en: Drain: keep polling until every WR posted and not yet completed has its completion back.
    // zh: 另一种做法（Linux 内核的 ib_drain_qp）：在 ERR 里再投递一个标记 WR，它回来时前面的一定都回来了。
    // en: The other way (the Linux kernel's ib_drain_qp): post one marker WR in ERR; when it returns, all before it have.
    int flushed = 0;
    long deadline = now_ms() + DRAIN_TIMEOUT_MS;
    while (b.sends_done < b.sends_posted || b.recvs_done < b.recvs_posted) {
        struct ibv_wc wc[8];
        int n = ibv_poll_cq(cq, 8, wc);
        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq failed\n");
            return 1;
        }
        for (int i = 0; i < n; i++)
            account(&wc[i], &b, &flushed);
        if (n == 0 && now_ms() > deadline) {
            fprintf(stderr, "drain timed out: %d WRs never came back\n",
                    b.sends_posted - b.sends_done + b.recvs_posted - b.recvs_done);
            break;
        }
    }
    printf("drained: %d completions flushed\n", flushed);
// endregion: drain

// region: destroy
    // zh: 按依赖的反方向：QP 引用着 CQ 和 PD，所以最先销毁。mlx5 销毁 QP 时会清掉它留在 CQ 里的完成，所以先排空。
    // en: Reverse order of dependency: the QP refers to the CQ and the PD, so it goes first. On mlx5 this removes its completions left in the CQ, hence the drain.
    if ((ret = ibv_destroy_qp(qp)))
        fail_ret("ibv_destroy_qp", ret);
    // zh: 还有 QP 在用的 CQ 销毁不了（EBUSY）；这些销毁函数失败时直接返回 errno 的值。
    // en: A CQ still used by a QP cannot be destroyed (EBUSY); these destroy calls return the errno value on failure.
    if ((ret = ibv_destroy_cq(cq)))
        fail_ret("ibv_destroy_cq", ret);
    // zh: MR 引用着 PD；注销之后才能释放它的内存，注册期间网卡随时可能访问那些页。
    // en: The MR refers to the PD; free its memory only after deregistering, since until then the NIC may touch those pages.
    if ((ret = ibv_dereg_mr(mr)))
        fail_ret("ibv_dereg_mr", ret);
    free(buf);
    // zh: PD 里还有 MR、QP 或 AH 时释放会返回 EBUSY。
    // en: Deallocating a PD that still holds MRs, QPs or AHs returns EBUSY.
    if ((ret = ibv_dealloc_pd(pd)))
        fail_ret("ibv_dealloc_pd", ret);
    // zh: 最后关闭设备：它不会替你释放下面的资源。
    // en: Close the device last: it does not free the resources under it for you.
    if (ibv_close_device(ctx))
        fail_errno("ibv_close_device");
// endregion: destroy
    return 0;
}
