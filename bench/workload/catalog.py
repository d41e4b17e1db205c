"""The 50-table catalog of the generated workspace, and its in-memory model.

Every table gets the same *roles* (title, status, priority or category, owner, tags,
amount, due date, a checkbox, notes, links to other tables, and the system fields), named
as a real Base would name them, so that the function generators can write realistic SQL
and Mutations against any table without knowing it. Five tables use Chinese names, as
many Lark sites do. Ids are drawn from the seeded generator, so the catalog is the same
for the same seed.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

ID_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What differs between tables: names, options and links (to other tables by name)."""

    name: str
    ident: str  # ASCII CamelCase singular, used in functionIds ("Task")
    plural: str  # ASCII CamelCase plural ("Tasks")
    noun: str  # how descriptions name one record ("task")
    title: str
    statuses: tuple[str, ...]  # first: where records start; last: where they end
    amount: str
    due: str
    flag: str  # a checkbox field
    flag_active: bool  # True: the usual filter is flag = TRUE (e.g. "Active")
    links: tuple[str, ...] = ()
    owner: str = "Owner"
    category: tuple[str, tuple[str, ...]] | None = None  # replaces Priority
    lang: str = "en"


PRIORITIES = ("P0", "P1", "P2", "P3")

_ROLE_NAMES = {
    "en": {"priority": "Priority", "tags": "Tags", "watchers": "Watchers", "notes": "Notes",
           "files": "Attachments", "location": "Location", "number": "No",
           "summary": "Summary Line", "created": "Created", "creator": "Created By",
           "updated": "Updated", "updater": "Updated By"},
    "zh": {"priority": "优先级", "tags": "标签", "watchers": "关注人", "notes": "备注",
           "files": "附件", "location": "地点", "number": "编号", "summary": "摘要",
           "created": "创建时间", "creator": "创建人", "updated": "更新时间",
           "updater": "更新人"},
}

_TAGS = ("urgent", "customer", "internal", "blocked", "quick win", "compliance", "security",
         "design", "backend", "frontend", "mobile", "data", "billing", "legal", "ops",
         "north", "south", "east", "west", "q1", "q2", "q3", "q4", "pilot", "renewal",
         "escalated", "vip", "follow-up", "research", "training")
_TAGS_ZH = ("紧急", "客户", "内部", "阻塞", "合规", "安全", "财务", "行政", "研发", "市场",
            "华北", "华东", "华南", "试点", "续约")

T = TableSpec
TABLE_SPECS: tuple[TableSpec, ...] = (
    T("Members", "Member", "Members", "member", "Name", ("Active", "On leave", "Left"),
      "Weekly Hours", "Joined On", "Archived", False, ("Departments",), owner="User"),
    T("Departments", "Department", "Departments", "department", "Name",
      ("Active", "Merging", "Closed"), "Budget", "Founded On", "Archived", False),
    T("Projects", "Project", "Projects", "project", "Name",
      ("Planning", "Active", "On hold", "Done"), "Budget", "Due", "Archived", False,
      ("Departments", "Customers")),
    T("Tasks", "Task", "Tasks", "task", "Title", ("Todo", "Doing", "Review", "Done"),
      "Estimate", "Due", "Archived", False, ("Projects", "Sprints")),
    T("Sprints", "Sprint", "Sprints", "sprint", "Name", ("Planned", "Running", "Closed"),
      "Capacity", "End Date", "Archived", False, ("Projects",)),
    T("Releases", "Release", "Releases", "release", "Version",
      ("Draft", "Scheduled", "Shipped", "Rolled back"), "Change Count", "Ship Date",
      "Archived", False, ("Projects",)),
    T("Issues", "Issue", "Issues", "issue", "Title",
      ("Open", "Triaged", "In progress", "Resolved", "Closed"), "Story Points", "Due",
      "Archived", False, ("Projects", "Releases"),
      category=("Severity", ("Critical", "Major", "Minor", "Trivial"))),
    T("Comments", "Comment", "Comments", "comment", "Body", ("Visible", "Hidden", "Flagged"),
      "Likes", "Posted At", "Archived", False, ("Tasks", "Issues")),
    T("Customers", "Customer", "Customers", "customer", "Name",
      ("Prospect", "Active", "Churned"), "Annual Value", "Renewal Date", "Archived", False,
      ("Members",), category=("Segment", ("Enterprise", "Mid-market", "SMB", "Public sector"))),
    T("Contacts", "Contact", "Contacts", "contact", "Full Name",
      ("New", "Engaged", "Unresponsive"), "Lead Score", "Last Contacted", "Archived", False,
      ("Customers",)),
    T("Leads", "Lead", "Leads", "lead", "Company",
      ("New", "Qualified", "Disqualified", "Converted"), "Estimated Value", "Follow Up",
      "Archived", False, ("Campaigns",),
      category=("Source", ("Website", "Referral", "Event", "Outbound", "Partner"))),
    T("Deals", "Deal", "Deals", "deal", "Title",
      ("Discovery", "Proposal", "Negotiation", "Won", "Lost"), "Amount", "Close Date",
      "Archived", False, ("Customers", "Leads")),
    T("Products", "Product", "Products", "product", "Name",
      ("Draft", "Available", "Discontinued"), "Price", "Launch Date", "Active", True,
      ("Vendors",), category=("Line", ("Hardware", "Software", "Services", "Accessories"))),
    T("Orders", "Order", "Orders", "order", "Order Number",
      ("Pending", "Paid", "Shipped", "Delivered", "Cancelled"), "Total", "Ordered At",
      "Archived", False, ("Customers",)),
    T("Order Items", "OrderItem", "OrderItems", "order item", "Description",
      ("Reserved", "Packed", "Backordered"), "Quantity", "Needed By", "Archived", False,
      ("Orders", "Products")),
    T("Invoices", "Invoice", "Invoices", "invoice", "Invoice Number",
      ("Draft", "Sent", "Paid", "Overdue", "Void"), "Amount", "Due Date", "Archived", False,
      ("Customers", "Orders")),
    T("Payments", "Payment", "Payments", "payment", "Reference",
      ("Pending", "Settled", "Failed", "Refunded"), "Amount", "Paid At", "Archived", False,
      ("Invoices",), category=("Method", ("Card", "Transfer", "Cash", "Wallet"))),
    T("Subscriptions", "Subscription", "Subscriptions", "subscription", "Name",
      ("Trial", "Active", "Past due", "Cancelled"), "Monthly Fee", "Renews On", "Auto Renew",
      True, ("Customers", "Plans")),
    T("Plans", "Plan", "Plans", "plan", "Name", ("Draft", "Public", "Retired"), "Price",
      "Effective From", "Active", True),
    T("Vendors", "Vendor", "Vendors", "vendor", "Name",
      ("Onboarding", "Approved", "Suspended"), "Rating", "Contract End", "Preferred", True),
    T("Purchase Orders", "PurchaseOrder", "PurchaseOrders", "purchase order", "PO Number",
      ("Draft", "Submitted", "Approved", "Received", "Cancelled"), "Total", "Expected On",
      "Archived", False, ("Vendors", "Departments")),
    T("Shipments", "Shipment", "Shipments", "shipment", "Tracking Number",
      ("Preparing", "In transit", "Delivered", "Returned"), "Weight", "Shipped At",
      "Archived", False, ("Orders", "Warehouses"),
      category=("Carrier", ("SF Express", "DHL", "UPS", "FedEx", "Local courier"))),
    T("Warehouses", "Warehouse", "Warehouses", "warehouse", "Name", ("Open", "Full", "Closed"),
      "Capacity", "Opened On", "Active", True),
    T("Stock Items", "StockItem", "StockItems", "stock item", "SKU",
      ("In stock", "Low", "Out of stock"), "Quantity", "Last Counted", "Archived", False,
      ("Products", "Warehouses")),
    T("Assets", "Asset", "Assets", "asset", "Asset Tag",
      ("In use", "Spare", "Repair", "Retired"), "Purchase Cost", "Warranty Ends", "Archived",
      False, ("Members", "Departments")),
    T("Maintenance Jobs", "MaintenanceJob", "MaintenanceJobs", "maintenance job", "Summary",
      ("Scheduled", "In progress", "Done", "Cancelled"), "Cost", "Scheduled For", "Archived",
      False, ("Assets", "Vendors")),
    T("报销单", "Expense", "Expenses", "expense claim", "事由",
      ("已提交", "已批准", "已驳回", "已报销"), "金额", "发生日期", "已归档", False,
      ("Members", "Projects"), owner="申请人", lang="zh",
      category=("费用类型", ("差旅", "餐饮", "办公用品", "培训", "其他"))),
    T("Budgets", "Budget", "Budgets", "budget", "Name", ("Draft", "Approved", "Frozen"),
      "Amount", "Period End", "Archived", False, ("Departments",)),
    T("Timesheets", "Timesheet", "Timesheets", "timesheet", "Summary",
      ("Draft", "Submitted", "Approved", "Rejected"), "Hours", "Week Of", "Archived", False,
      ("Members", "Projects")),
    T("休假申请", "LeaveRequest", "LeaveRequests", "leave request", "原因",
      ("待审批", "已批准", "已驳回", "已撤回"), "天数", "开始日期", "已归档", False, ("Members",),
      owner="申请人", lang="zh", category=("假期类型", ("年假", "病假", "事假", "调休"))),
    T("Candidates", "Candidate", "Candidates", "candidate", "Full Name",
      ("Applied", "Screening", "Interviewing", "Offer", "Hired", "Rejected"),
      "Expected Salary", "Applied On", "Archived", False, ("Job Openings",)),
    T("Job Openings", "JobOpening", "JobOpenings", "job opening", "Title",
      ("Draft", "Open", "Paused", "Filled"), "Headcount", "Target Date", "Archived", False,
      ("Departments",)),
    T("Interviews", "Interview", "Interviews", "interview", "Round",
      ("Scheduled", "Completed", "No show", "Cancelled"), "Score", "Scheduled At", "Archived",
      False, ("Candidates", "Members")),
    T("Courses", "Course", "Courses", "course", "Title", ("Draft", "Published", "Withdrawn"),
      "Hours", "Starts On", "Featured", True, ("Departments",)),
    T("Enrollments", "Enrollment", "Enrollments", "enrollment", "Learner Name",
      ("Enrolled", "In progress", "Completed", "Dropped"), "Progress", "Enrolled On",
      "Archived", False, ("Courses", "Members")),
    T("Events", "Event", "Events", "event", "Name",
      ("Planned", "Open", "Sold out", "Finished", "Cancelled"), "Budget", "Starts At",
      "Archived", False, ("Venues", "Campaigns")),
    T("Registrations", "Registration", "Registrations", "registration", "Attendee Name",
      ("Registered", "Waitlisted", "Checked in", "Cancelled"), "Ticket Price",
      "Registered At", "Archived", False, ("Events", "Contacts")),
    T("Venues", "Venue", "Venues", "venue", "Name", ("Available", "Booked", "Unavailable"),
      "Capacity", "Available From", "Active", True),
    T("Campaigns", "Campaign", "Campaigns", "campaign", "Name",
      ("Draft", "Running", "Paused", "Ended"), "Budget", "Ends On", "Archived", False,
      ("Departments",), category=("Channel", ("Email", "Search", "Social", "Events", "Print"))),
    T("Articles", "Article", "Articles", "article", "Headline",
      ("Draft", "In review", "Published", "Unpublished"), "Word Count", "Publish At",
      "Archived", False, ("Campaigns", "Members")),
    T("Feedback Items", "FeedbackItem", "FeedbackItems", "feedback item", "Summary",
      ("New", "Acknowledged", "Planned", "Declined"), "Votes", "Received At", "Archived",
      False, ("Customers", "Products")),
    T("Surveys", "Survey", "Surveys", "survey", "Title", ("Draft", "Collecting", "Closed"),
      "Target Responses", "Closes On", "Archived", False, ("Campaigns",)),
    T("Survey Responses", "SurveyResponse", "SurveyResponses", "survey response",
      "Respondent", ("Partial", "Complete", "Discarded"), "Score", "Submitted At", "Archived",
      False, ("Surveys", "Contacts")),
    T("Incidents", "Incident", "Incidents", "incident", "Title",
      ("Detected", "Investigating", "Mitigated", "Resolved", "Postmortem"), "Minutes Down",
      "Started At", "Archived", False, ("Releases", "Assets"),
      category=("Severity", ("SEV1", "SEV2", "SEV3", "SEV4"))),
    T("Change Requests", "ChangeRequest", "ChangeRequests", "change request", "Title",
      ("Proposed", "Approved", "Scheduled", "Implemented", "Rejected"), "Risk Score",
      "Planned For", "Archived", False, ("Incidents", "Releases")),
    T("Contracts", "Contract", "Contracts", "contract", "Title",
      ("Drafting", "Negotiating", "Signed", "Expired", "Terminated"), "Value", "Expires On",
      "Archived", False, ("Customers", "Vendors")),
    T("Documents", "Document", "Documents", "document", "Title",
      ("Draft", "Review", "Approved", "Obsolete"), "Pages", "Review By", "Archived", False,
      ("Projects", "Contracts")),
    T("审批", "Approval", "Approvals", "approval", "主题", ("待处理", "已通过", "已拒绝", "已升级"),
      "金额", "截止日期", "已归档", False, ("Members", "Documents"), owner="审批人", lang="zh"),
    T("会议", "Meeting", "Meetings", "meeting", "议题", ("已安排", "已召开", "已取消"), "参会人数",
      "开始时间", "已归档", False, ("会议室", "Projects"), owner="组织者", lang="zh"),
    T("会议室", "Room", "Rooms", "meeting room", "名称", ("可用", "维护中", "停用"), "座位数",
      "可用日期", "可预订", True, lang="zh", owner="管理员"),
)
del T


@dataclass(slots=True)
class GenField:
    field_id: str
    name: str
    type: str
    role: str
    multiple: bool = False
    options: tuple[str, ...] = ()
    link_table_id: str | None = None
    link_target: str | None = None  # table name of a link's target

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"fieldId": self.field_id, "name": self.name, "type": self.type}
        if self.type in ("select", "user"):
            doc["multiple"] = self.multiple
        if self.type == "select":
            doc["options"] = [{"name": option} for option in self.options]
        if self.type == "link":
            doc["linkTable"] = self.link_table_id
        return doc


@dataclass(slots=True)
class GenTable:
    table_id: str
    spec: TableSpec
    fields: list[GenField] = field(default_factory=list)
    children: list[tuple[str, GenField]] = field(default_factory=list)  # (table, link field)

    @property
    def name(self) -> str:
        return self.spec.name

    def role(self, role: str) -> GenField:
        return next(f for f in self.fields if f.role == role)

    def has_role(self, role: str) -> bool:
        return any(f.role == role for f in self.fields)

    @property
    def links(self) -> list[GenField]:
        return [f for f in self.fields if f.type == "link"]

    def to_json(self) -> dict[str, Any]:
        return {"tableId": self.table_id, "name": self.name,
                "fields": [f.to_json() for f in self.fields]}


class Catalog:
    """The generated tables, by name, with link targets resolved both ways."""

    def __init__(self, base_token: str, tables: list[GenTable]) -> None:
        self.base_token = base_token
        self.tables = tables
        self.by_name = {t.name: t for t in tables}

    def to_json(self) -> dict[str, Any]:
        return {"baseToken": self.base_token, "tables": [t.to_json() for t in self.tables]}


def random_id(rng: random.Random, prefix: str, length: int) -> str:
    return prefix + "".join(rng.choice(ID_ALPHABET) for _ in range(length))


def build_catalog(rng: random.Random) -> Catalog:
    """Fifty tables with 14-20 fields each, covering every Base field type."""
    tables = [GenTable(random_id(rng, "tbl", 13), spec) for spec in TABLE_SPECS]
    ids = {t.name: t.table_id for t in tables}
    for table in tables:
        table.fields = _fields(rng, table.spec, ids)
    by_name = {t.name: t for t in tables}
    for table in tables:
        for link in table.links:
            assert link.link_target is not None
            by_name[link.link_target].children.append((table.name, link))
    return Catalog(random_id(rng, "bas", 14), tables)


def _fields(rng: random.Random, spec: TableSpec, ids: dict[str, str]) -> list[GenField]:
    names = _ROLE_NAMES[spec.lang]
    used: set[str] = set()

    def add(role: str, name: str, kind: str, **extra: Any) -> None:
        if name in used:  # a role name that collides with a table-specific name
            name = f"{name} ({role})"
        used.add(name)
        fields.append(GenField(random_id(rng, "fld", 10), name, kind, role, **extra))

    fields: list[GenField] = []
    add("title", spec.title, "text")
    add("status", "状态" if spec.lang == "zh" else "Status", "select", multiple=False,
        options=spec.statuses)
    category_name, category_options = spec.category or (names["priority"], PRIORITIES)
    add("category", category_name, "select", multiple=False, options=category_options)
    add("owner", spec.owner, "user", multiple=False)
    vocabulary = _TAGS_ZH if spec.lang == "zh" else _TAGS
    tags = rng.sample(vocabulary, k=rng.randint(5, min(len(vocabulary), 25)))
    add("tags", names["tags"], "select", multiple=True, options=tuple(tags))
    add("amount", spec.amount, "number")
    add("due", spec.due, "datetime")
    add("flag", spec.flag, "checkbox")
    for target in spec.links:
        target_spec = next(s for s in TABLE_SPECS if s.name == target)
        link_name = target if target_spec.lang == "zh" else target_spec.noun.title()
        add("link", link_name, "link", link_table_id=ids[target], link_target=target)
    add("notes", names["notes"], "text")
    if rng.random() < 0.5:
        add("watchers", names["watchers"], "user", multiple=True)
    if rng.random() < 0.4:
        add("files", names["files"], "attachment")
    if rng.random() < 0.2:
        add("location", names["location"], "location")
    if rng.random() < 0.3:
        add("summary", names["summary"], "formula")
    if spec.links and rng.random() < 0.4:
        suffix = "名称" if spec.lang == "zh" else " Name"
        add("lookup", _link_label(spec) + suffix, "lookup")
    add("number", names["number"], "auto_number")
    add("created", names["created"], "created_at")
    add("creator", names["creator"], "created_by")
    add("updated", names["updated"], "updated_at")
    if rng.random() < 0.5:
        add("updater", names["updater"], "updated_by")
    return fields


def _link_label(spec: TableSpec) -> str:
    target = spec.links[0]
    target_spec = next(s for s in TABLE_SPECS if s.name == target)
    return target if target_spec.lang == "zh" else target_spec.noun.title()
