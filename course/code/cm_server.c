// zh: cm_server.c：RDMA CM 的被动端。监听一个端口，接受一个连接，往客户端的缓冲区 WRITE_WITH_IMM 一条消息，然后等对方断开。
// en: cm_server.c: the passive side of the RDMA CM. It listens on a port, accepts one connection, WRITE_WITH_IMMs a message into the client's buffer, then waits for the disconnect.
// zh: 客户端缓冲区的地址和 rkey 来自 CONNECT_REQUEST 事件里的私有数据。
// en: The client buffer's address and rkey come from the private data of the CONNECT_REQUEST event.
// zh: 仿真器不模拟 RDMA CM（地址与路由解析、QP1 上的 REQ/REP/RTU），所以本程序没有对应的会话，也没有“在演练场打开”按钮。
// en: The simulator does not model the RDMA CM (address and route resolution, REQ/REP/RTU over QP1), so this program has no session and no "open in the playground" button.
// playground: none
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o cm_server cm_server.c -lrdmacm -libverbs
// zh: 运行（先起服务端）：
// en: Run (the server first):
//   server$ ./cm_server [PORT]
//   client$ ./cm_client SERVER_IP [PORT]
// zh: PORT 默认 7471；服务端监听本机所有 IPv4 地址。
// en: PORT defaults to 7471; the server listens on every local IPv4 address.

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_SIZE 4096
#define CQ_DEPTH 16
#define DEFAULT_PORT "7471"

// zh: 放进私有数据的 16 字节：缓冲区地址、rkey、长度，全部网络字节序（大端）。
// en: The 16 bytes carried as private data: buffer address, rkey, length, all network byte order (big-endian).
struct mr_info {
    uint64_t addr;
    uint32_t rkey;
    uint32_t len;
};

// zh: 返回 NULL 或 -1 并设置 errno 的调用（librdmacm 全是这样）用这个报错。
// en: For calls that return NULL or -1 and set errno (all of librdmacm does).
static void fail_errno(const char *call)
{
    fprintf(stderr, "%s failed: %s (errno %d)\n", call, strerror(errno), errno);
    exit(1);
}

// zh: verbs 的销毁函数直接返回 errno 的值（不是 -1），用这个报错。
// en: The verbs destroy calls return the errno value itself (not -1).
static void fail_ret(const char *call, int ret)
{
    fprintf(stderr, "%s failed: %s (%d)\n", call, strerror(ret), ret);
    exit(1);
}

static void die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    exit(1);
}

static uint8_t min_u8(int a, int b)
{
    int m = a < b ? a : b;
    return (uint8_t)(m < 0 ? 0 : m > 255 ? 255 : m);
}

// zh: 忙轮询一条完成，先查 status；出错时只有 wr_id、status、qp_num、vendor_err 可信。
// en: Busy-poll one completion and check status first; on an error only wr_id, status, qp_num and vendor_err are valid.
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    int n;
    do {
        n = ibv_poll_cq(cq, 1, &wc);
    } while (n == 0);
    if (n < 0)
        die("ibv_poll_cq failed");
    if (wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "WR %" PRIu64 " failed: %s (vendor_err 0x%x)\n", wc.wr_id,
                ibv_wc_status_str(wc.status), wc.vendor_err);
        exit(1);
    }
    return wc;
}

// zh: 与 cm_client.c 的 events 一段相同：取一个事件，核对类型，必要时拷出私有数据，然后确认。
// en: The same as the events region of cm_client.c: take one event, check its type, copy private data if asked, then ack.
// zh: 从事件通道取下一个事件，它必须是 want；需要时把私有数据拷到 pdata（len 字节）。
// en: Take the next event from the channel; it must be want. Copy len bytes of private data to pdata if asked.
static void wait_event(struct rdma_event_channel *ec, enum rdma_cm_event_type want, void *pdata,
                       size_t len)
{
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(ec, &ev))
        fail_errno("rdma_get_cm_event");
    // zh: DREQ 超时后的 DISCONNECTED 带非 0 的 status，这对拆除无碍；其余事件 status 必须为 0。
    // en: A DISCONNECTED after a DREQ timeout has a non-zero status, harmless for teardown; other events need status 0.
    if (ev->event != want || (ev->status && want != RDMA_CM_EVENT_DISCONNECTED)) {
        fprintf(stderr, "expected %s, got %s (status %d)\n", rdma_event_str(want),
                rdma_event_str(ev->event), ev->status);
        exit(1);
    }
    // zh: 私有数据属于这个事件，确认之后就被释放，所以先拷出来。它可能比对方写的长，多出的部分是 0。
    // en: Private data belongs to the event and is freed by the ack, so copy it first. It may be longer than what the peer wrote, padded with zeros.
    if (pdata) {
        if (!ev->param.conn.private_data || ev->param.conn.private_data_len < len)
            die("the peer sent no (or too little) private data");
        memcpy(pdata, ev->param.conn.private_data, len);
    }
    // zh: 每个事件都必须确认；rdma_destroy_id 会一直等到这个 cm_id 的事件全部确认为止。
    // en: Every event must be acknowledged; rdma_destroy_id waits until all events of its cm_id are.
    if (rdma_ack_cm_event(ev))
        fail_errno("rdma_ack_cm_event");
}

#define IMM_VALUE 1
#define SEND_WR_ID 1

static const char MESSAGE[] = "hello from cm_server, by RDMA WRITE_WITH_IMM";

struct resources {
    struct ibv_device_attr dev_attr;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    char *buf;
};

// zh: 连接请求到来时才知道用哪块设备（id->verbs），所以 PD、CQ、MR 在这时才建。
// en: Which device to use (id->verbs) is known only when the request arrives, so the PD, CQ and MR are created then.
static void create_resources(struct ibv_context *verbs, struct resources *r)
{
    int ret = ibv_query_device(verbs, &r->dev_attr);
    if (ret)
        fail_ret("ibv_query_device", ret);
    r->pd = ibv_alloc_pd(verbs);
    if (!r->pd)
        fail_errno("ibv_alloc_pd");
    r->cq = ibv_create_cq(verbs, CQ_DEPTH, NULL, NULL, 0);
    if (!r->cq)
        fail_errno("ibv_create_cq");
    r->buf = aligned_alloc(4096, BUF_SIZE);
    if (!r->buf)
        fail_errno("aligned_alloc");
    memcpy(r->buf, MESSAGE, sizeof MESSAGE);
    // zh: 这块内存只是 WRITE 的数据源，网卡只读它：不需要任何权限标志。
    // en: This memory is only the WRITE's source and the NIC only reads it: no access flags needed.
    r->mr = ibv_reg_mr(r->pd, r->buf, BUF_SIZE, 0);
    if (!r->mr)
        fail_errno("ibv_reg_mr");
}

int main(int argc, char **argv)
{
    const char *port = argc > 1 ? argv[1] : DEFAULT_PORT;
    struct resources r = { 0 };
    int ret;

    struct rdma_event_channel *ec = rdma_create_event_channel();
    if (!ec)
        fail_errno("rdma_create_event_channel");
    struct rdma_cm_id *listen_id;
    if (rdma_create_id(ec, &listen_id, NULL, RDMA_PS_TCP))
        fail_errno("rdma_create_id");
    // zh: 和 socket 一样先 bind 再 listen；端口属于 RDMA CM 自己的端口空间（RDMA_PS_TCP），在 RoCE 上与内核 TCP 的端口无关。
    // en: As with sockets, bind then listen; the port is in the RDMA CM's own port space (RDMA_PS_TCP), on RoCE unrelated to kernel TCP ports.
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
                                .sin_addr.s_addr = htonl(INADDR_ANY) };
    if (rdma_bind_addr(listen_id, (struct sockaddr *)&addr))
        fail_errno("rdma_bind_addr");
    if (rdma_listen(listen_id, 1))
        fail_errno("rdma_listen");
    printf("listening on RDMA CM port %s\n", port);

    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(ec, &ev))
        fail_errno("rdma_get_cm_event");
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
        fprintf(stderr, "expected CONNECT_REQUEST, got %s\n", rdma_event_str(ev->event));
        return 1;
    }

// region: accept
    // zh: CONNECT_REQUEST 带来一个新的 cm_id（相当于 accept 返回的新 socket），它已绑定到收到请求的设备。
    // en: CONNECT_REQUEST brings a new cm_id (like the new socket accept returns), already bound to the device the request came in on.
    struct rdma_cm_id *id = ev->id;
    const struct rdma_conn_param *req = &ev->param.conn;
    struct mr_info peer;
    if (!req->private_data || req->private_data_len < sizeof peer) {
        rdma_reject(id, NULL, 0);
        die("connect request without the client's address and rkey");
    }
    memcpy(&peer, req->private_data, sizeof peer);
    create_resources(id->verbs, &r);
    struct ibv_qp_init_attr qp_init = {
        .send_cq = r.cq, .recv_cq = r.cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
    };
    // zh: 在新的 cm_id 上建 QP，RESET→INIT 同样由库完成。
    // en: The QP is created on the new cm_id; again the library does RESET→INIT.
    if (rdma_create_qp(id, r.pd, &qp_init))
        fail_errno("rdma_create_qp");
    // zh: 额度只能往下调。事件里的值已换成本端视角：responder_resources 是对方想发出的 READ/原子个数。
    // en: Credits may only go down. The event's values are from our side: responder_resources is what the peer wants to issue.
    struct rdma_conn_param param = {
        .responder_resources = min_u8(req->responder_resources, r.dev_attr.max_qp_rd_atom),
        .initiator_depth = min_u8(req->initiator_depth, r.dev_attr.max_qp_init_rd_atom),
        .rnr_retry_count = 7,
    };
    // zh: rdma_accept 先做 INIT→RTR→RTS，再发出 REP；用完事件里的数据之后才确认事件。
    // en: rdma_accept does INIT→RTR→RTS before it sends the REP; the event is acked only after its data has been used.
    if (rdma_accept(id, &param))
        fail_errno("rdma_accept");
    if (rdma_ack_cm_event(ev))
        fail_errno("rdma_ack_cm_event");
// endregion: accept

    // zh: RTU 到达才报告 ESTABLISHED，而客户端发 RTU 之前已经到了 RTS：现在发送不会被对方丢掉。
    // en: ESTABLISHED is reported when the RTU arrives, and the client is in RTS before it sends the RTU: sending now is safe.
    wait_event(ec, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
    printf("connected: local QP 0x%06x\n", id->qp->qp_num);

    if (sizeof MESSAGE > ntohl(peer.len))
        die("the client's buffer is too small");
    struct ibv_sge sge = { .addr = (uintptr_t)r.buf, .length = sizeof MESSAGE, .lkey = r.mr->lkey };
    struct ibv_send_wr wr = {
        .wr_id = SEND_WR_ID, .sg_list = &sge, .num_sge = 1,
        .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htonl(IMM_VALUE),
        .wr.rdma = { .remote_addr = be64toh(peer.addr), .rkey = ntohl(peer.rkey) },
    };
    struct ibv_send_wr *bad_wr;
    if ((ret = ibv_post_send(id->qp, &wr, &bad_wr)))
        fail_ret("ibv_post_send", ret);
    poll_one(r.cq);
    printf("wrote %zu bytes into the client's buffer\n", sizeof MESSAGE);

    // zh: 客户端读完就断开。收到 DISCONNECTED 后本端也要调用 rdma_disconnect：它把本端 QP 改到 ERR，并回 DREP。
    // en: The client disconnects once it has read the message. On DISCONNECTED we call rdma_disconnect too: it moves our QP to ERR and answers with a DREP.
    wait_event(ec, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
    if (rdma_disconnect(id))
        fail_errno("rdma_disconnect");

    // zh: 没有未完成的 WR；按创建的反顺序拆除，监听的 cm_id 和事件通道最后。
    // en: No WR is outstanding; tear down in reverse order of creation, the listening cm_id and the event channel last.
    rdma_destroy_qp(id);
    if ((ret = ibv_destroy_cq(r.cq)))
        fail_ret("ibv_destroy_cq", ret);
    if ((ret = ibv_dereg_mr(r.mr)))
        fail_ret("ibv_dereg_mr", ret);
    free(r.buf);
    if ((ret = ibv_dealloc_pd(r.pd)))
        fail_ret("ibv_dealloc_pd", ret);
    if (rdma_destroy_id(id))
        fail_errno("rdma_destroy_id");
    if (rdma_destroy_id(listen_id))
        fail_errno("rdma_destroy_id");
    rdma_destroy_event_channel(ec);
    return 0;
}
