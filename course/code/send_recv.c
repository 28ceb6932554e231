// zh: send_recv.c：双边的 SEND/RECV，用完成通道睡眠等待完成，而不是忙轮询。
// en: send_recv.c: two-sided SEND/RECV, sleeping on a completion channel instead of busy polling.
// zh: 客户端发 3 条 ping，服务端每收到一条就回一条 pong；两端都先投递接收 WR，再让对方有机会发送。
// en: The client sends 3 pings and the server answers each with a pong; both post receive WRs before the peer can send.
// zh: 每收到一条消息就把那个接收槽重新投递，接收队列始终不空（空了对方会收到 RNR NAK）。
// en: Every slot that received a message is posted again, so the receive queue never runs dry (that would mean RNR NAKs).
// playground: send_recv_channel
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o send_recv send_recv.c -libverbs
// zh: 运行（先起服务端，客户端给出服务端的 IP）：
// en: Run (the server first; the client names the server's IP):
//   server$ ./send_recv [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU]
//   client$ ./send_recv [-d DEV] [-i IB_PORT] [-g GID_INDEX] [-p TCP_PORT] [-m MTU] SERVER_IP
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

// zh: SLOTS 是始终挂在接收队列里的接收 WR 个数。
// en: SLOTS is the number of receive WRs kept posted at all times.
#define SLOTS 4
#define SLOT_SIZE 256
#define ROUNDS 3
#define CQ_DEPTH 16
#define SEND_WR_ID 1000

// zh: 一块 MR 分成 SLOTS 个接收槽，后面再跟一个发送槽。
// en: One MR, cut into SLOTS receive slots followed by one send slot.
struct state {
    struct ibv_comp_channel *channel;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    char *buf;
    int recvs_posted, recvs_done, sends_done;
};

// region: post_recv
// zh: 把第 slot 个接收槽交给接收队列；wr_id 就用槽号，完成回来时据此找到数据。
// en: Hand receive slot number slot to the receive queue; wr_id is the slot number, so the completion says where the data is.
static void post_recv_slot(struct state *s, int slot)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(s->buf + slot * SLOT_SIZE),
        .length = SLOT_SIZE,
        .lkey = s->mr->lkey,
    };
    struct ibv_recv_wr wr = { .wr_id = (uint64_t)slot, .next = NULL, .sg_list = &sge, .num_sge = 1 };
    struct ibv_recv_wr *bad_wr = NULL;
    // zh: 返回 0 或 errno 本身；用 next 串成链表时，bad_wr 指向第一个失败的 WR，它前面的已投递。
    // en: Returns 0 or the errno itself; for a chain built with next, bad_wr is the first WR that failed and those before it are posted.
    int ret = ibv_post_recv(s->qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_recv", ret);
    s->recvs_posted++;
}
// endregion: post_recv

// region: post_send
static void post_send_msg(struct state *s, const char *text)
{
    char *slot = s->buf + SLOTS * SLOT_SIZE;
    size_t len = strlen(text) + 1;
    memcpy(slot, text, len);
    struct ibv_sge sge = { .addr = (uintptr_t)slot, .length = (uint32_t)len, .lkey = s->mr->lkey };
    // zh: 没有远端地址，也没有 rkey：数据落在哪里，由对方接收队列里的下一个接收 WR 决定。
    // en: No remote address and no rkey: the next receive WR in the peer's queue decides where the data lands.
    struct ibv_send_wr wr = {
        .wr_id = SEND_WR_ID,
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        // zh: SIGNALED：成功时也要一个完成。再加 IBV_SEND_SOLICITED 会置上 Solicited Event 位。
        // en: SIGNALED: a completion on success too. IBV_SEND_SOLICITED would also set the Solicited Event bit.
        .send_flags = IBV_SEND_SIGNALED,
    };
    struct ibv_send_wr *bad_wr = NULL;
    int ret = ibv_post_send(s->qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_send", ret);
    // zh: 拿到这个 SEND 的完成之前，发送槽不能改写：网卡可能还没读它。
    // en: The send slot must not be rewritten before this SEND's completion: the NIC may not have read it yet.
}
// endregion: post_send

static void handle_completion(struct state *s, const struct ibv_wc *wc)
{
    if (wc->opcode == IBV_WC_SEND) {
        s->sends_done++;
    } else if (wc->opcode == IBV_WC_RECV) {
        int slot = (int)wc->wr_id;
        printf("received %u bytes in slot %d: \"%.*s\"\n", wc->byte_len, slot,
               (int)wc->byte_len, s->buf + slot * SLOT_SIZE);
        s->recvs_done++;
        // zh: 数据用完后马上把这个槽重新投递，接收队列里始终有 SLOTS 个 WR。
        // en: Once the data is used, post the slot again: the queue always holds SLOTS WRs.
        post_recv_slot(s, slot);
    }
}

// region: wait
// zh: 睡在完成通道上，直到 *counter 达到 target；期间到来的每条完成都处理掉。
// en: Sleep on the completion channel until *counter reaches target, handling every completion on the way.
static void wait_for(struct state *s, const int *counter, int target)
{
    while (*counter < target) {
        struct ibv_cq *ev_cq;
        void *ev_ctx;
        // zh: 阻塞等待：内部是对 channel->fd 的一次 read()，网卡中断后内核把本线程唤醒。
        // en: Blocks: inside it is one read() on channel->fd; the kernel wakes us after the NIC's interrupt.
        if (ibv_get_cq_event(s->channel, &ev_cq, &ev_ctx))
            fail_errno("ibv_get_cq_event");
        // zh: 每个取到的事件都要确认，否则 ibv_destroy_cq 会一直等下去。
        // en: Every event taken must be acknowledged, or ibv_destroy_cq waits forever.
        ibv_ack_cq_events(ev_cq, 1);
        // zh: 先重新请求通知，再排空。反过来的话，排空与请求之间到达的 CQE 不产生事件，线程可能永远睡下去。
        // en: Re-arm first, then drain. The other way round, a CQE arriving in between raises no event and we may sleep forever.
        int ret = ibv_req_notify_cq(ev_cq, 0);
        if (ret)
            fail_ret("ibv_req_notify_cq", ret);
        struct ibv_wc wc;
        int n;
        // zh: poll 到返回 0 为止；偶尔一条都没有（它已被上一轮排空取走），无害。
        // en: Poll until it returns 0; now and then there is none (the last drain took it), which is harmless.
        while ((n = ibv_poll_cq(ev_cq, 1, &wc)) > 0) {
            if (wc.status != IBV_WC_SUCCESS)
                fail_wc(&wc);
            handle_completion(s, &wc);
        }
        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq failed\n");
            exit(1);
        }
    }
}
// endregion: wait

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    int is_server = (o.server == NULL);
    struct state s = { 0 };
    struct ibv_port_attr port;
    int gid_index, ret;
    union ibv_gid my_gid;

    struct ibv_context *ctx = open_device(&o, &port, &gid_index, &my_gid);

// region: channel
    // zh: 完成通道带一个文件描述符 channel->fd：可以阻塞在上面，也可以交给 poll/epoll。
    // en: A completion channel carries a file descriptor, channel->fd: block on it or hand it to poll/epoll.
    s.channel = ibv_create_comp_channel(ctx);
    if (!s.channel)
        fail_errno("ibv_create_comp_channel");
    // zh: 通道和 CQ 属于设备上下文而不是 PD，所以通道可以最先创建；PD 到 ibv_create_qp 时才用到。
    // en: The channel and the CQ belong to the device context, not to a PD, so the channel may come first; the PD is needed only from ibv_create_qp on.
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd)
        fail_errno("ibv_alloc_pd");
    // zh: 第四个参数把 CQ 挂到这个通道上；comp_vector（这里是 0）选 CQ 用哪个中断向量。
    // en: The fourth argument attaches the CQ to the channel; comp_vector (0 here) picks its interrupt vector.
    s.cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, s.channel, 0);
    if (!s.cq)
        fail_errno("ibv_create_cq");
// endregion: channel

    struct ibv_qp_init_attr qp_init = {
        .send_cq = s.cq, .recv_cq = s.cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 4, .max_recv_wr = SLOTS, .max_send_sge = 1, .max_recv_sge = 1 },
    };
    s.qp = ibv_create_qp(pd, &qp_init);
    if (!s.qp)
        fail_errno("ibv_create_qp");
    // zh: SEND/RECV 不需要任何远端访问权限。
    // en: SEND/RECV needs no remote access rights at all.
    qp_to_init(s.qp, o.ib_port, 0);

    size_t buf_size = (SLOTS + 1) * SLOT_SIZE;
    s.buf = calloc(1, buf_size);
    if (!s.buf)
        fail_errno("calloc");
    // zh: 网卡要往接收槽里写，所以要 LOCAL_WRITE；只用来发送的内存不需要任何权限。
    // en: The NIC writes into the receive slots, hence LOCAL_WRITE; memory used only for sending needs none.
    s.mr = ibv_reg_mr(pd, s.buf, buf_size, IBV_ACCESS_LOCAL_WRITE);
    if (!s.mr)
        fail_errno("ibv_reg_mr");

// region: arm
    // zh: 请求完成通知（俗称“武装”CQ）：此后写入的下一个 CQE 会在通道上产生一个事件。
    // en: Request completion notification ("arm" the CQ): the next CQE written raises an event on the channel.
    // zh: 请求是一次性的：产生一个事件后就用掉了，要再次请求（见 wait 一段）。
    // en: The request is one-shot: after one event it is used up and must be made again (see the wait region).
    // zh: 第二个参数为 0 表示任何完成都通知；非 0 时只有 solicited 的接收完成和出错的完成才通知。
    // en: A second argument of 0 means any completion; non-zero means only solicited receives and errors.
    // zh: 在投递第一个 WR 之前请求：那时还不可能有任何完成。
    // en: Request it before the first WR is posted: nothing can have completed yet.
    if ((ret = ibv_req_notify_cq(s.cq, 0)))
        fail_ret("ibv_req_notify_cq", ret);
// endregion: arm

    // zh: INIT 里就可以投递接收了：在对方有机会发送之前，接收缓冲区已经就位。
    // en: Receives may be posted from INIT on: the buffers are in place before the peer can possibly send.
    for (int i = 0; i < SLOTS; i++)
        post_recv_slot(&s, i);

    uint32_t my_psn = random_psn();
    struct conn_info me = { .qpn = s.qp->qp_num, .psn = my_psn, .gid = my_gid,
                            .rkey = s.mr->rkey, .addr = (uintptr_t)s.buf };
    struct conn_info peer;
    int sock = oob_connect(o.server, o.tcp_port);
    exchange(sock, &me, &peer);
    qp_to_rtr(s.qp, o.ib_port, gid_index, o.mtu ? o.mtu : port.active_mtu, &peer, 0);
    qp_to_rts(s.qp, my_psn, 0);
    // zh: 两端都到了 RTS 再开始发送（原因见 rc_write.c 的 rts 一段）。
    // en: Start sending only once both sides are in RTS (see the rts region of rc_write.c for why).
    sync_peer(sock, 'R');

    char text[64];
    for (int r = 0; r < ROUNDS; r++) {
        if (is_server) {
            wait_for(&s, &s.recvs_done, r + 1);
            snprintf(text, sizeof text, "pong %d", r);
            post_send_msg(&s, text);
            wait_for(&s, &s.sends_done, r + 1);
        } else {
            snprintf(text, sizeof text, "ping %d", r);
            post_send_msg(&s, text);
            wait_for(&s, &s.sends_done, r + 1);
            wait_for(&s, &s.recvs_done, r + 1);
        }
    }

    // zh: 先在 TCP 上道“再见”，再改 ERR：ERR 是本地的事，不会通知远端。
    // en: Say goodbye over TCP before moving to ERR: ERR is a local matter and tells the peer nothing.
    sync_peer(sock, 'B');
    close(sock);
    // zh: 还有 SLOTS 个接收 WR 挂着：改 ERR，等它们以 FLUSH_ERR 全部回来，再拆（详见 teardown.c）。
    // en: SLOTS receive WRs are still posted: move to ERR, wait until all come back flushed, then tear down (see teardown.c).
    struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
    if ((ret = ibv_modify_qp(s.qp, &attr, IBV_QP_STATE)))
        fail_ret("ibv_modify_qp(ERR)", ret);
    for (int left = s.recvs_posted - s.recvs_done; left > 0;) {
        struct ibv_wc wc;
        int n = ibv_poll_cq(s.cq, 1, &wc);
        if (n < 0) {
            fprintf(stderr, "ibv_poll_cq failed\n");
            return 1;
        }
        if (n == 1 && wc.status != IBV_WC_WR_FLUSH_ERR && wc.status != IBV_WC_SUCCESS)
            fail_wc(&wc);
        left -= n;
    }

    // zh: 按依赖的反方向拆除：QP 用着 CQ 和 PD，所以最先；完成通道要等用它的 CQ 销毁之后才能销毁。
    // en: Tear down against the dependencies: the QP uses the CQ and the PD, so it goes first; the completion channel goes only after the CQ that uses it.
    if ((ret = ibv_destroy_qp(s.qp)))
        fail_ret("ibv_destroy_qp", ret);
    if ((ret = ibv_destroy_cq(s.cq)))
        fail_ret("ibv_destroy_cq", ret);
    if ((ret = ibv_destroy_comp_channel(s.channel)))
        fail_ret("ibv_destroy_comp_channel", ret);
    if ((ret = ibv_dereg_mr(s.mr)))
        fail_ret("ibv_dereg_mr", ret);
    free(s.buf);
    if ((ret = ibv_dealloc_pd(pd)))
        fail_ret("ibv_dealloc_pd", ret);
    if (ibv_close_device(ctx))
        fail_errno("ibv_close_device");
    return 0;
}
