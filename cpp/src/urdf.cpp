// Chain::from_urdf through urdfdom (built when IKSTACK_WITH_URDFDOM finds it). The rules are the
// Python loader's: fixed joints fold into the next origin (or the tip transform), floating,
// planar and mimic joints on the path are refused, a velocity limit of 0 reads as "not given".
#include "ikstack/chain.hpp"

#ifdef IKSTACK_HAVE_URDFDOM
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#endif

namespace ikstack {

bool Chain::has_urdf_support() {
#ifdef IKSTACK_HAVE_URDFDOM
    return true;
#else
    return false;
#endif
}

#ifdef IKSTACK_HAVE_URDFDOM
namespace {

Mat4 pose_matrix(const urdf::Pose& p) {
    double x = p.rotation.x, y = p.rotation.y, z = p.rotation.z, w = p.rotation.w;
    const double n = std::sqrt(x * x + y * y + z * z + w * w);
    x /= n;
    y /= n;
    z /= n;
    w /= n;
    Mat4 T;
    T.m[0][0] = 1 - 2 * (y * y + z * z);
    T.m[0][1] = 2 * (x * y - z * w);
    T.m[0][2] = 2 * (x * z + y * w);
    T.m[1][0] = 2 * (x * y + z * w);
    T.m[1][1] = 1 - 2 * (x * x + z * z);
    T.m[1][2] = 2 * (y * z - x * w);
    T.m[2][0] = 2 * (x * z - y * w);
    T.m[2][1] = 2 * (y * z + x * w);
    T.m[2][2] = 1 - 2 * (x * x + y * y);
    T.m[0][3] = p.position.x;
    T.m[1][3] = p.position.y;
    T.m[2][3] = p.position.z;
    return T;
}

}  // namespace
#endif

Chain Chain::from_urdf(const std::string& path, const std::string& base, const std::string& tip) {
#ifndef IKSTACK_HAVE_URDFDOM
    (void)path;
    (void)base;
    (void)tip;
    throw ModelError("Chain::from_urdf needs urdfdom: configure with -DIKSTACK_WITH_URDFDOM=ON "
                     "where urdfdom is installed (Debian: liburdfdom-dev), or export the chain "
                     "with 'ikstack export' and use Chain::from_file");
#else
    std::ifstream in(path);
    if (!in) throw ModelError(path + ": cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    urdf::ModelInterfaceSharedPtr model = urdf::parseURDF(ss.str());
    if (!model) throw ModelError(path + ": urdfdom could not parse the URDF");
    if (!model->getLink(base)) throw ModelError(path + ": no link named '" + base + "'");
    if (!model->getLink(tip)) throw ModelError(path + ": no link named '" + tip + "'");
    // walk from the tip up to the base
    std::vector<urdf::JointConstSharedPtr> up;
    urdf::LinkConstSharedPtr link = model->getLink(tip);
    while (link && link->name != base) {
        urdf::JointConstSharedPtr j = link->parent_joint;
        if (!j)
            throw ModelError(path + ": link '" + base + "' is not an ancestor of link '" + tip + "'");
        up.push_back(j);
        link = model->getLink(j->parent_link_name);
    }
    std::reverse(up.begin(), up.end());
    std::vector<Joint> joints;
    std::vector<std::string> zero_velocity;
    Mat4 pending;
    for (const auto& j : up) {
        const Mat4 origin = pose_matrix(j->parent_to_joint_origin_transform);
        if (j->type == urdf::Joint::FIXED) {
            pending = matmul(pending, origin);
            continue;
        }
        if (j->type == urdf::Joint::FLOATING || j->type == urdf::Joint::PLANAR)
            throw ModelError(path + ": joint '" + j->name +
                             "' has more than one degree of freedom; a serial chain cannot hold it");
        if (j->mimic)
            throw ModelError(path + ": joint '" + j->name +
                             "' is a mimic joint; ikstack chains model independent joints only");
        Joint out;
        out.name = j->name;
        out.link = j->child_link_name;
        out.type = j->type == urdf::Joint::CONTINUOUS  ? JointType::Continuous
                   : j->type == urdf::Joint::PRISMATIC ? JointType::Prismatic
                                                       : JointType::Revolute;
        out.axis = {j->axis.x, j->axis.y, j->axis.z};
        out.origin = matmul(pending, origin);
        pending = Mat4{};
        if (j->limits) {
            if (out.type != JointType::Continuous) {
                out.lower = j->limits->lower;
                out.upper = j->limits->upper;
            }
            if (j->limits->velocity < 0)
                throw ModelError(path + ": joint '" + j->name + "' has a negative velocity limit");
            if (j->limits->velocity > 0)
                out.velocity = j->limits->velocity;
            else
                zero_velocity.push_back(j->name);
        }
        joints.push_back(out);
    }
    if (joints.empty())
        throw ModelError(path + ": no moving joint between '" + base + "' and '" + tip + "'");
    ChainInfo info;
    info.name = model->getName();
    info.base = base;
    info.tip = tip;
    info.source = path;
    if (!zero_velocity.empty()) {
        std::string note =
            "a URDF velocity limit of 0 is read as 'not given' (unlimited) for joint(s): ";
        for (size_t k = 0; k < zero_velocity.size(); ++k)
            note += (k ? ", " : "") + zero_velocity[k];
        info.notes.push_back(note);
    }
    return Chain(std::move(joints), pending, Mat4{}, {}, {}, info);
#endif
}

}  // namespace ikstack
