// zh: read_atomic.c：RDMA READ、两种远端原子操作（CMP_AND_SWP、FETCH_AND_ADD）和 WRITE_WITH_IMM。
// en: read_atomic.c: RDMA READ, the two remote atomics (CMP_AND_SWP, FETCH_AND_ADD) and WRITE_WITH_IMM.
// zh: 服务端只准备好内存：一段文字、一个锁字（0 表示空闲）、一个从 100 开始的计数器，外加一个接收 WR。
// en: The server only prepares memory: a text, a lock word (0 means free), a counter starting at 100, and one receive WR.
// zh: 客户端先 READ 那段文字，再用 CAS 抢锁两次、用 FAA 给计数器加两次，最后用 WRITE_WITH_IMM 通知服务端。
// en: The client READs the text, takes the lock with CAS twice, adds to the counter with FAA twice, then notifies the server with WRITE_WITH_IMM.
// zh: 只有最后一步用到服务端的 CPU：它取那条接收完成。
// en: Only the last step involves the server's CPU: it takes that receive completion.
// playground: read_atomic
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o read_atomic read_atomic.c -libverbs
// zh: 运行（先起服务端，客户端给出服务端的 IP）：
// en: Run (the server first; the client names the server's IP):
//   server$ ./read_atomic [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU]
//   client$ ./read_atomic [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU] SERVER_IP
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

// zh: 两端的缓冲区布局相同（偏移量两端事先约定）。原子操作的目标必须 8 字节对齐。
// en: Both sides lay their buffer out the same way (offsets agreed in advance). Atomic targets must be 8-byte aligned.
#define BUF_SIZE 4096
// zh: OFF_TEXT：服务端的文字 / 客户端 READ 的目的地。OFF_LOCK：锁字 / CAS 的原值。
// en: OFF_TEXT: the server's text / the client's READ destination. OFF_LOCK: the lock word / the CAS original.
// zh: OFF_COUNTER：计数器 / FAA 的原值。WRITE_WITH_IMM 写进第 IMM_SLOT 个 64 字节的槽（偏移 128）。
// en: OFF_COUNTER: the counter / the FAA original. WRITE_WITH_IMM lands in 64-byte slot IMM_SLOT (offset 128).
#define OFF_TEXT 0
#define TEXT_LEN 64
#define OFF_LOCK 64
#define OFF_COUNTER 72
#define SLOT_SIZE 64
#define IMM_SLOT 2
#define CQ_DEPTH 16

enum { WRID_READ = 1, WRID_CAS, WRID_FAA, WRID_IMM, WRID_IMM_SLOT };

static const char TEXT[] = "server memory, fetched by RDMA READ";
static const char NOTE[] = "client: all done";

struct conn {
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    char *buf;
    struct conn_info peer;
};

static void die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    exit(1);
}

static void post_send_wr(struct conn *c, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad_wr = NULL;
    int ret = ibv_post_send(c->qp, wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_send", ret);
}

// zh: 忙轮询一条完成：先查 status，再确认它正是我们在等的那个 WR。
// en: Busy-poll one completion: check status first, then that it is the WR we are waiting for.
static struct ibv_wc poll_one(struct conn *c, uint64_t wr_id)
{
    struct ibv_wc wc;
    int n;
    do {
        n = ibv_poll_cq(c->cq, 1, &wc);
    } while (n == 0);
    if (n < 0) {
        fprintf(stderr, "ibv_poll_cq failed\n");
        exit(1);
    }
    if (wc.status != IBV_WC_SUCCESS)
        fail_wc(&wc);
    if (wc.wr_id != wr_id) {
        fprintf(stderr, "expected WR %" PRIu64 ", got WR %" PRIu64 "\n", wr_id, wc.wr_id);
        exit(1);
    }
    return wc;
}

// region: read
static void rdma_read(struct conn *c, uint64_t remote_off, uint32_t len)
{
    // zh: SGE 指向本地的目的缓冲区：响应的数据由网卡写进来，所以它的 MR 要有 LOCAL_WRITE。
    // en: The SGE points at the local destination: the NIC writes the response into it, so its MR needs LOCAL_WRITE.
    struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + OFF_TEXT), .length = len,
                           .lkey = c->mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = WRID_READ,
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_RDMA_READ,
        .send_flags = IBV_SEND_SIGNALED,
        // zh: 远端的 MR 要有 REMOTE_READ（单独给它是合法的，不需要 LOCAL_WRITE）。
        // en: The remote MR needs REMOTE_READ (legal on its own, without LOCAL_WRITE).
        .wr.rdma = { .remote_addr = c->peer.addr + remote_off, .rkey = c->peer.rkey },
    };
    post_send_wr(c, &wr);
    // zh: 完成之前网卡随时可能写这块缓冲区：既不要读，也不要改。
    // en: Until the completion the NIC may write this buffer at any time: neither read nor change it.
    struct ibv_wc wc = poll_one(c, WRID_READ);
    printf("READ %u bytes: \"%.*s\"\n", wc.byte_len, (int)wc.byte_len, c->buf + OFF_TEXT);
}
// endregion: read

// region: cas
static uint64_t remote_cas(struct conn *c, uint64_t remote_off, uint64_t compare, uint64_t swap)
{
    // zh: 远端的原值写回这个 8 字节的本地缓冲区（它的 MR 要有 LOCAL_WRITE）。
    // en: The remote original value comes back into this 8-byte local buffer (its MR needs LOCAL_WRITE).
    uint64_t *orig = (uint64_t *)(c->buf + OFF_LOCK);
    struct ibv_sge sge = { .addr = (uintptr_t)orig, .length = 8, .lkey = c->mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = WRID_CAS,
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
        .send_flags = IBV_SEND_SIGNALED,
        // zh: 远端的字等于 compare_add 时才写入 swap；remote_addr 必须 8 字节对齐。
        // en: swap is written only if the remote word equals compare_add; remote_addr must be 8-byte aligned.
        .wr.atomic = { .remote_addr = c->peer.addr + remote_off, .rkey = c->peer.rkey,
                       .compare_add = compare, .swap = swap },
    };
    post_send_wr(c, &wr);
    poll_one(c, WRID_CAS);
    // zh: 比较不相等也是 IBV_WC_SUCCESS：要拿返回的原值和 compare 比，才知道换没换。
    // en: A failed compare is still IBV_WC_SUCCESS: compare the returned original with compare to learn if it swapped.
    printf("CAS(compare %" PRIu64 ", swap %" PRIu64 "): original %" PRIu64 ", %s\n", compare,
           swap, *orig, *orig == compare ? "swapped, the lock is ours" : "not swapped");
    return *orig;
}
// endregion: cas

// region: faa
static uint64_t remote_faa(struct conn *c, uint64_t remote_off, uint64_t add)
{
    uint64_t *orig = (uint64_t *)(c->buf + OFF_COUNTER);
    struct ibv_sge sge = { .addr = (uintptr_t)orig, .length = 8, .lkey = c->mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = WRID_FAA,
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
        .send_flags = IBV_SEND_SIGNALED,
        // zh: 加数放在 compare_add 里；FAA 不用 swap。
        // en: The addend goes in compare_add; FAA does not use swap.
        .wr.atomic = { .remote_addr = c->peer.addr + remote_off, .rkey = c->peer.rkey,
                       .compare_add = add },
    };
    post_send_wr(c, &wr);
    poll_one(c, WRID_FAA);
    // zh: 原值就是“领到的号”：许多客户端同时对同一个计数器做 FAA，各自拿到不同的原值。
    // en: The original is "the number you were handed": many clients adding at once each get a different one.
    printf("FAA(add %" PRIu64 "): original %" PRIu64 "\n", add, *orig);
    return *orig;
}
// endregion: faa

// region: imm
// zh: 接收端：WRITE_WITH_IMM 会消耗一个接收 WR，但它只是个通知槽，不需要缓冲区（num_sge = 0）。
// en: Receiver: a WRITE_WITH_IMM consumes a receive WR, but it is only a notification slot with no buffer (num_sge = 0).
static void post_imm_slot(struct conn *c)
{
    struct ibv_recv_wr wr = { .wr_id = WRID_IMM_SLOT, .sg_list = NULL, .num_sge = 0 }, *bad_wr;
    int ret = ibv_post_recv(c->qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_recv", ret);
}
// zh: 发送端：和普通 WRITE 只差 opcode 和 imm_data 两处；立即数按网络字节序放，这里装的是槽号。
// en: Sender: only opcode and imm_data differ from a plain WRITE; the immediate is in network byte order and holds the slot number.
static void write_with_imm(struct conn *c, uint32_t slot, uint32_t len)
{
    struct ibv_sge sge = { (uintptr_t)(c->buf + slot * SLOT_SIZE), len, c->mr->lkey };
    struct ibv_send_wr wr = { .wr_id = WRID_IMM, .sg_list = &sge, .num_sge = 1,
                              .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
                              .imm_data = htonl(slot),
                              .wr.rdma = { .remote_addr = c->peer.addr + slot * SLOT_SIZE,
                                           .rkey = c->peer.rkey } };
    post_send_wr(c, &wr);
    poll_one(c, WRID_IMM);
}
// zh: 接收端：poll_one 已先查过 status；看到这条完成时，这次以及更早的 WRITE 的数据都已就位。
// en: Receiver: poll_one checked status first; by this completion the data of this and every earlier WRITE is in place.
static void wait_imm(struct conn *c)
{
    struct ibv_wc wc = poll_one(c, WRID_IMM_SLOT);
    if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM))
        die("expected a receive completion with immediate data");
    uint32_t slot = ntohl(wc.imm_data);
    printf("WRITE_WITH_IMM: slot %u, %u bytes: \"%.*s\"\n", slot, wc.byte_len,
           (int)wc.byte_len, c->buf + slot * SLOT_SIZE);
}
// endregion: imm

static uint8_t min_u8(int a, int b)
{
    int m = a < b ? a : b;
    return (uint8_t)(m > 255 ? 255 : m);
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    int is_server = (o.server == NULL);
    struct conn c = { 0 };
    struct ibv_port_attr port;
    int gid_index, ret;
    union ibv_gid my_gid;

    struct ibv_context *ctx = open_device(&o, &port, &gid_index, &my_gid);
    struct ibv_device_attr dev_attr;
    if ((ret = ibv_query_device(ctx, &dev_attr)))
        fail_ret("ibv_query_device", ret);
    // zh: atomic_cap 为 IBV_ATOMIC_NONE 的设备不支持原子操作。
    // en: A device with atomic_cap IBV_ATOMIC_NONE has no atomics.
    // zh: IBV_ATOMIC_HCA 只保证同一块网卡的原子操作彼此互斥，所以服务端的 CPU 要等客户端说“完了”之后才读锁字和计数器。
    // en: IBV_ATOMIC_HCA only makes this NIC's atomics exclusive of each other, so the server's CPU reads the lock word and counter only after the client says it is done.
    if (dev_attr.atomic_cap == IBV_ATOMIC_NONE) {
        fprintf(stderr, "%s does not support atomics\n", ibv_get_device_name(ctx->device));
        return 1;
    }

    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd)
        fail_errno("ibv_alloc_pd");
    c.buf = aligned_alloc(4096, BUF_SIZE);
    if (!c.buf)
        fail_errno("aligned_alloc");
    memset(c.buf, 0, BUF_SIZE);
    // zh: 服务端是被访问的一方：REMOTE_READ、REMOTE_WRITE、REMOTE_ATOMIC，后两者都要求 LOCAL_WRITE。
    // en: The server is the target: REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC; the last two require LOCAL_WRITE.
    // zh: 客户端只需 LOCAL_WRITE：READ 的数据和原子操作的原值都由它的网卡写进本地内存。
    // en: The client needs only LOCAL_WRITE: its NIC writes READ data and atomic originals into local memory.
    int access = IBV_ACCESS_LOCAL_WRITE;
    if (is_server) {
        access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
        memcpy(c.buf + OFF_TEXT, TEXT, sizeof TEXT);
        *(uint64_t *)(c.buf + OFF_LOCK) = 0;
        *(uint64_t *)(c.buf + OFF_COUNTER) = 100;
    }
    c.mr = ibv_reg_mr(pd, c.buf, BUF_SIZE, access);
    if (!c.mr)
        fail_errno("ibv_reg_mr");
    c.cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
    if (!c.cq)
        fail_errno("ibv_create_cq");
    struct ibv_qp_init_attr qp_init = {
        .send_cq = c.cq, .recv_cq = c.cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
    };
    c.qp = ibv_create_qp(pd, &qp_init);
    if (!c.qp)
        fail_errno("ibv_create_qp");
    // zh: QP 这一道门也要打开：READ、WRITE、原子操作各要一个标志。
    // en: The QP's gate must open too: one flag each for READ, WRITE and atomics.
    qp_to_init(c.qp, o.ib_port, is_server ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                                                IBV_ACCESS_REMOTE_ATOMIC
                                          : 0);
    if (is_server)
        post_imm_slot(&c);

    uint32_t my_psn = random_psn();
    struct conn_info me = { .qpn = c.qp->qp_num, .psn = my_psn, .gid = my_gid,
                            .rkey = c.mr->rkey, .addr = (uintptr_t)c.buf };
    int sock = oob_connect(o.server, o.tcp_port);
    exchange(sock, &me, &c.peer);
    // zh: READ/原子的额度：服务端作为响应方提供 max_dest_rd_atomic 份响应资源（每个请求留一份记录，以便应答重发）。
    // en: READ/atomic credits: the server as responder offers max_dest_rd_atomic responder resources (a record per request, to answer resends).
    // zh: 客户端的 max_rd_atomic 不能超过这个数。多交换一个字节把它告诉对方。
    // en: The client's max_rd_atomic must not exceed it. One more byte over TCP tells the peer.
    uint8_t my_resources = is_server ? min_u8(dev_attr.max_qp_rd_atom, 16) : 0;
    uint8_t peer_resources;
    write_full(sock, &my_resources, 1);
    read_full(sock, &peer_resources, 1);
    uint8_t my_depth = min_u8(dev_attr.max_qp_init_rd_atom, peer_resources);
    if (!is_server && my_depth == 0) {
        fprintf(stderr, "no READ/atomic credits (local %d, peer %u)\n",
                dev_attr.max_qp_init_rd_atom, peer_resources);
        return 1;
    }
    qp_to_rtr(c.qp, o.ib_port, gid_index, o.mtu ? o.mtu : port.active_mtu, &c.peer,
              my_resources);
    qp_to_rts(c.qp, my_psn, my_depth);
    sync_peer(sock, 'R');

    if (is_server) {
        wait_imm(&c);
        sync_peer(sock, 'B');
        printf("lock word %" PRIu64 ", counter %" PRIu64 "\n",
               *(uint64_t *)(c.buf + OFF_LOCK), *(uint64_t *)(c.buf + OFF_COUNTER));
    } else {
        if ((c.peer.addr + OFF_LOCK) % 8 || (c.peer.addr + OFF_COUNTER) % 8) {
            fprintf(stderr, "the peer's atomic targets are not 8-byte aligned\n");
            return 1;
        }
        rdma_read(&c, OFF_TEXT, TEXT_LEN);
        remote_cas(&c, OFF_LOCK, 0, 1);
        remote_cas(&c, OFF_LOCK, 0, 2);
        remote_faa(&c, OFF_COUNTER, 5);
        remote_faa(&c, OFF_COUNTER, 10);
        memcpy(c.buf + IMM_SLOT * SLOT_SIZE, NOTE, sizeof NOTE);
        write_with_imm(&c, IMM_SLOT, sizeof NOTE);
        sync_peer(sock, 'B');
    }
    close(sock);

    // zh: 每个投递过的 WR 都已完成，可以直接按反顺序拆除。
    // en: Every WR posted has completed, so tear down directly, in reverse order.
    if ((ret = ibv_destroy_qp(c.qp)))
        fail_ret("ibv_destroy_qp", ret);
    if ((ret = ibv_destroy_cq(c.cq)))
        fail_ret("ibv_destroy_cq", ret);
    if ((ret = ibv_dereg_mr(c.mr)))
        fail_ret("ibv_dereg_mr", ret);
    free(c.buf);
    if ((ret = ibv_dealloc_pd(pd)))
        fail_ret("ibv_dealloc_pd", ret);
    if (ibv_close_device(ctx))
        fail_errno("ibv_close_device");
    return 0;
}
